// Everything in one include.
#pragma once

#include "blume/aging_bloom_filter.hpp"
#include "blume/blocked_bloom_filter.hpp"
#include "blume/bloom_filter.hpp"
#include "blume/counting_bloom_filter.hpp"
#include "blume/cuckoo_filter.hpp"
#include "blume/error.hpp"
#include "blume/format.hpp"
#include "blume/hash.hpp"
#include "blume/kind.hpp"
#include "blume/partitioned_bloom_filter.hpp"
#include "blume/plan.hpp"
#include "blume/quotient_filter.hpp"
#include "blume/scalable_bloom_filter.hpp"
#include "blume/simd.hpp"
#include "blume/stable_bloom_filter.hpp"
#include "blume/storage.hpp"
