// SPDX-License-Identifier: Apache-2.0
// Everything in one include: every kind (through kinds.hpp, the one list), the run-time dispatch, files,
// planning, hashing and the RedisBloom-compatible types.
#pragma once

#include "blume/any_filter.hpp"
#include "blume/build_stats.hpp"
#include "blume/error.hpp"
#include "blume/fill.hpp"
#include "blume/format.hpp"
#include "blume/hash.hpp"
#include "blume/kind.hpp"
#include "blume/kinds.hpp"
#include "blume/plan.hpp"
#include "blume/redisbloom.hpp"
#include "blume/redisbloom_format.hpp"
#include "blume/serialization.hpp"
#include "blume/simd.hpp"
#include "blume/storage.hpp"
#include "blume/strata_estimator.hpp"
