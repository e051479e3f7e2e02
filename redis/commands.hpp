// SPDX-License-Identifier: Apache-2.0
// Registration of the module's data types and commands (bloom.cpp: BF.*, cuckoo.cpp: CF.*,
// counting.cpp: CBF.*, window.cpp: WBF.*).
#pragma once

#include "module_api.hpp"

namespace blume::redis {

/// The MBbloom-- type (RedisBloom's name and encoding version, so RDB files move both ways) and BF.*.
bool register_bloom(RedisModuleCtx* ctx);
/// The MBbloomCF type and CF.*.
bool register_cuckoo(RedisModuleCtx* ctx);
/// blume's own counting Bloom filter type, blume-CBF, and CBF.*.
bool register_counting(RedisModuleCtx* ctx);
/// blume's own windowed filter type, blume-WBF, and WBF.*.
bool register_window(RedisModuleCtx* ctx);

}  // namespace blume::redis
