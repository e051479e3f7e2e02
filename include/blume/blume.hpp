// SPDX-License-Identifier: Apache-2.0
// Everything in one include: every kind (through kinds.hpp, the one list), the run-time dispatch, files,
// planning, hashing and the RedisBloom-compatible types.
#pragma once

#include "blume/aggregation/dias.hpp"
#include "blume/any_filter.hpp"
#include "blume/build_stats.hpp"
#include "blume/compat/redisbloom.hpp"
#include "blume/compat/redisbloom_format.hpp"
#include "blume/error.hpp"
#include "blume/fill.hpp"
#include "blume/hash.hpp"
#include "blume/index/bitsliced_index.hpp"
#include "blume/index/terms.hpp"
#include "blume/io/format.hpp"
#include "blume/io/index_format.hpp"
#include "blume/io/serialization.hpp"
#include "blume/kind.hpp"
#include "blume/kinds.hpp"
#include "blume/kinds/strata_estimator.hpp"
#include "blume/plan.hpp"
#include "blume/simd.hpp"
#include "blume/storage.hpp"
#include "blume/version.hpp"
