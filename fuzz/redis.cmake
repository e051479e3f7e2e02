# SPDX-License-Identifier: Apache-2.0
# The Redis module's harnesses (included by fuzz/CMakeLists.txt). They decode with the module's own code,
# redis/codec.cpp and redis/native.hpp, which need no server: SCANDUMP/LOADCHUNK streams and RDB records of
# the BF, CF, CBF and WBF types.
# Seed corpora: fuzz/corpus/<name>/, written by fuzz/redis_seeds.cpp from the module's encoders.
blume_add_fuzzer(redis_bf_chunk fuzz/redis_bf_chunk_fuzz.cpp redis/codec.cpp)
blume_add_fuzzer(redis_cf_chunk fuzz/redis_cf_chunk_fuzz.cpp redis/codec.cpp)
blume_add_fuzzer(redis_bf_rdb fuzz/redis_bf_rdb_fuzz.cpp redis/codec.cpp)
blume_add_fuzzer(redis_cf_rdb fuzz/redis_cf_rdb_fuzz.cpp redis/codec.cpp)
blume_add_fuzzer(redis_cbf_chunk fuzz/redis_cbf_chunk_fuzz.cpp redis/codec.cpp)
blume_add_fuzzer(redis_cbf_rdb fuzz/redis_cbf_rdb_fuzz.cpp redis/codec.cpp)
blume_add_fuzzer(redis_wbf_chunk fuzz/redis_wbf_chunk_fuzz.cpp redis/codec.cpp)
blume_add_fuzzer(redis_wbf_rdb fuzz/redis_wbf_rdb_fuzz.cpp redis/codec.cpp)
