#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The blume command-line tool, run as a real binary: every subcommand's happy path, round trips
build -> query -> info -> merge, stdin and file input, exit codes, JSON, the progress line, and bad input
(one line on stderr, exit status 2, no partial or damaged output)."""

import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest

BLUME = os.environ.get("BLUME_CLI", "blume")
KEYS = [f"user{i}@example.com" for i in range(20000)]
ABSENT = [f"nobody{i}@example.org" for i in range(20000)]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def run(*args, stdin=None, check=None):
    result = subprocess.run([BLUME, *map(str, args)], input=stdin, capture_output=True)
    if check is not None:
        assert result.returncode == check, (args, result.returncode, result.stderr.decode())
    return result


class Tool(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="blume-cli-")
        self.keys = self.path("keys.txt")
        with open(self.keys, "w") as f:
            f.write("\n".join(KEYS) + "\n")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def build(self, name, *extra, items="20k", keys=None):
        out = self.path(name)
        run("build", "--items", items, "--input", keys or self.keys, "--output", out, *extra, check=0)
        return out

    def assertFails(self, args, mentions, stdin=None):
        """Exit status 2 and one line on stderr that mentions `mentions`."""
        result = run(*args, stdin=stdin)
        self.assertEqual(result.returncode, 2, (args, result.stderr))
        lines = result.stderr.decode().strip().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(mentions, lines[0])
        return lines[0]


class Plan(Tool):
    def test_every_kind_side_by_side(self):
        out = run("plan", "--items", "100M", "--fpr", "1%", check=0).stdout.decode()
        for kind in ("bloom", "partitioned", "blocked", "split-block", "counting", "cuckoo", "quotient", "scalable",
                     "stable", "aging"):
            self.assertIn(kind, out)
        self.assertIn("958505838", out)  # the classic filter: m for 100M at 1%
        self.assertIn("114.26 MiB", out)
        self.assertIn("hash set", out)
        self.assertIn("6.64 bits per key", out)  # log2(100)

    def test_one_kind_and_the_inverse_question(self):
        out = run("plan", "--items", "100M", "--memory", "120MiB", "--kind", "bloom", check=0).stdout.decode()
        self.assertIn("0.794%", out)
        self.assertEqual(run("plan", "--items", "1M", "--fpr", "0.01", "--kind", "cuckoo", check=0).returncode, 0)

    def test_maps_and_cascades_from_their_own_inputs(self):
        out = run("plan", "--items", "1M", "--fpr", "0.4%", "--kind", "bloomier", "--value-bits", "8",
                  check=0).stdout.decode()
        row = next(line for line in out.splitlines() if line.startswith("bloomier"))
        self.assertEqual(row.split()[4], "8", row)  # 8 check bits for 0.4%: rate 2^-8 (after "2.16 MiB")
        self.assertIn("0.391%", row)
        out = run("plan", "--items", "20000", "--kind", "cascade", "--excluded", "2M", check=0).stdout.decode()
        self.assertIn("exact on both", out)
        row = next(line for line in out.splitlines() if line.startswith("cascade"))
        self.assertIn("exact", row)
        self.assertLess(float(row.split()[5]), 20)  # bits per included key: about 1.44·log2(|S|/|R|) + a tail
        out = run("plan", "--items", "1M", "--fpr", "1%", "--value-bits", "4", "--excluded", "5M",
                  check=0).stdout.decode()
        self.assertIn("split-block", out)  # every kind, then the two with their own inputs
        self.assertIn("bloomier", out)
        self.assertIn("cascade", out)
        self.assertFails(("plan", "--items", "1M", "--fpr", "1%", "--kind", "bloomier"), "--value-bits")
        self.assertFails(("plan", "--items", "1M", "--kind", "cascade"), "--excluded")
        self.assertFails(("plan", "--items", "1M", "--fpr", "1%", "--kind", "bloomier", "--value-bits", "40"),
                         "--value-bits")
        self.assertFails(("plan", "--items", "1M", "--fpr", "1%", "--value-bits", "0"), "--value-bits")

    def test_bad_numbers(self):
        self.assertFails(("plan", "--items", "100M", "--fpr", "2"), "--fpr")
        self.assertFails(("plan", "--items", "-5", "--fpr", "1%"), "--items")
        self.assertFails(("plan", "--items", "1e30", "--fpr", "1%"), "--items")
        self.assertFails(("plan", "--items", "10M", "--fpr", "1%", "--kind", "bogus"), "unknown filter kind 'bogus'")
        self.assertFails(("plan", "--items", "10M"), "either --fpr or --memory")
        self.assertFails(("plan", "--items", "10M", "--memory", "lots"), "--memory")

    def test_bits_are_bits_and_cells_and_counters_are_named(self):
        # A spatial filter's array is of 8-bit cells: the bits column counts bits, the cells are named as such.
        out = run("plan", "--items", "1M", "--fpr", "1%", "--kind", "spatial", "--sets", "4", check=0).stdout.decode()
        row = next(line for line in out.splitlines() if line.startswith("spatial"))
        cells = int(row.split()[-5])
        self.assertIn(f"{cells} cells of 8 bits", row)
        self.assertEqual(int(row.split()[1]), 8 * cells)
        plan = json.loads(run("plan", "--items", "1M", "--fpr", "1%", "--kind", "spatial", "--sets", "4", "--json",
                              check=0).stdout)["kinds"][0]
        self.assertEqual((plan["bits"], plan["cells"], plan["cell_bits"]), (8 * cells, cells, 8))
        # Every kind: the bits fill the memory it takes, give or take a table's slack.
        plan = json.loads(run("plan", "--items", "1M", "--fpr", "1%", "--value-bits", "8", "--sets", "4", "--json",
                              check=0).stdout)["kinds"]
        for row in plan:
            self.assertLessEqual(row["bits"], 8 * row["bytes"], row)
            self.assertLess(8 * row["bytes"] - row["bits"], 1024, row)
        units = {row["kind"]: [key for key in ("cells", "counters") if key in row] for row in plan}
        self.assertEqual({kind: unit for kind, unit in units.items() if unit},
                         {"counting": ["counters"], "stable": ["cells"], "vi-counting": ["counters"],
                          "iblt": ["cells"], "spatial": ["cells"], "compact": ["cells"]})
        counting = next(row for row in plan if row["kind"] == "counting")
        self.assertEqual((counting["bits"], counting["counter_bits"]), (4 * counting["counters"], 4))


class BuildQueryInfo(Tool):
    def test_build_query_info_round_trip(self):
        f = self.build("f.blume")
        out = run("query", f, stdin="\n".join(KEYS).encode(), check=0).stdout.decode().splitlines()
        self.assertEqual(len(out), len(KEYS))
        self.assertTrue(all(line.endswith("\tmaybe") for line in out))
        answers = run("query", f, stdin="\n".join(ABSENT).encode()).stdout.decode().splitlines()
        false_positives = sum(a.endswith("\tmaybe") for a in answers)
        self.assertLess(false_positives, len(ABSENT) * 0.02)
        self.assertEqual(run("query", f, KEYS[0], KEYS[1], check=0).stdout.decode(),
                         f"{KEYS[0]}\tmaybe\n{KEYS[1]}\tmaybe\n")
        info = json.loads(run("info", "--json", f, check=0).stdout)
        self.assertEqual(info["kind"], "split-block")
        self.assertEqual(info["inserted"], len(KEYS))
        self.assertEqual(info["checksum"], "ok")
        text = run("info", f, check=0).stdout.decode()
        self.assertIn("predicted FPR now", text)

    def test_json_is_valid_for_every_kind(self):
        # The kinds built from one key set, as the tool lists them: a kind added to the library is tested here.
        kinds = [row["kind"] for row in json.loads(run("plan", "--items", "30k", "--fpr", "1%", "--json").stdout)["kinds"]]
        self.assertIn("split-block", kinds)
        for kind in kinds:
            f = self.build(f"{kind}.blume", "--kind", kind, items="30k")
            tool = subprocess.run(["/usr/bin/python3", "-m", "json.tool"], input=run("info", "--json", f).stdout,
                                  capture_output=True)
            self.assertEqual(tool.returncode, 0, (kind, tool.stderr))
            info = json.loads(tool.stdout)
            self.assertEqual(info["kind"], kind)
            if not info["forgets"]:  # the forgetting kinds may rightly answer "absent"
                self.assertEqual(run("query", "-q", f, *KEYS[:500]).returncode, 0, kind)

    def test_stdin_and_file_input_give_the_same_filter(self):
        a = self.build("a.blume")
        b = self.path("b.blume")
        with open(self.keys, "rb") as keys:
            subprocess.run([BLUME, "build", "--items", "20k", "--output", b], stdin=keys, check=True)
        self.assertEqual(read(a), read(b))
        c = self.build("c.blume", "--threads", "1")
        self.assertEqual(read(a), read(c))

    def test_static_kinds_build_from_all_keys_and_refuse_inserts(self):
        f = self.build("fuse.blume", "--kind", "fuse8")
        self.assertEqual(run("query", "-q", f, *KEYS[::97]).returncode, 0)
        self.assertEqual(json.loads(run("info", "--json", f).stdout)["inserted"], len(KEYS))
        self.assertFails(("add", f, "late@example.com"), "static")
        self.assertFails(("build", "--kind", "fuse8", "--fpr", "0.1%", "--items", "10", "--input", self.keys,
                          "--output", self.path("x.blume")), "fuse16")

    def test_bloomier_map_answers_values(self):
        records = self.path("map.tsv")
        with open(records, "w") as f:
            f.write("".join(f"{k}\t{i % 1000}\n" for i, k in enumerate(KEYS)))
        out = self.path("map.blume")
        run("build", "--kind", "bloomier", "--input", records, "--output", out, check=0)
        answers = run("query", out, *KEYS[:500], check=0).stdout.decode().splitlines()
        self.assertEqual(answers, [f"{k}\t{i % 1000}" for i, k in enumerate(KEYS[:500])])
        absent = run("query", out, *ABSENT).stdout.decode().splitlines()
        misses = sum(line.endswith("\tno") for line in absent)
        self.assertGreater(misses, 0.98 * len(ABSENT))  # 7 check bits at the default 1%: 0.78%
        info = json.loads(run("info", "--json", out, check=0).stdout)
        self.assertEqual((info["kind"], info["inserted"], info["value_bits"], info["check_bits"]),
                         ("bloomier", len(KEYS), 10, 7))
        self.assertFails(("build", "--kind", "bloomier", "--output", self.path("x.blume")), "record 2",
                         stdin=b"a\t1\nb\n")
        self.assertFails(("build", "--kind", "bloomier", "--value-bits", "3", "--output", self.path("x.blume")),
                         "does not fit in 3 bits", stdin=b"a\t9\n")
        self.assertFails(("add", out, "k"), "static")
        self.assertFalse(os.path.exists(self.path("x.blume")))

    def test_spatial_filter_answers_each_keys_set(self):
        records = self.path("areas.tsv")
        with open(records, "w") as f:
            f.write("".join(f"{k}\t{1 + i % 3}\n" for i, k in enumerate(KEYS)))
        out = self.path("areas.blume")
        run("build", "--kind", "spatial", "--input", records, "--output", out, check=0)
        answers = run("query", out, *KEYS[:3000], check=0).stdout.decode().splitlines()
        sets = [int(line.split("\t")[1]) for line in answers]
        self.assertTrue(all(got >= 1 + i % 3 for i, got in enumerate(sets)), "a member reported as an earlier set")
        self.assertGreater(sum(got == 1 + i % 3 for i, got in enumerate(sets)), 0.98 * len(sets))
        absent = run("query", out, *ABSENT).stdout.decode().splitlines()
        self.assertGreater(sum(line.endswith("\tno") for line in absent), 0.98 * len(ABSENT))
        info = json.loads(run("info", "--json", out, check=0).stdout)
        self.assertEqual((info["kind"], info["inserted"], len(info["sets"])), ("spatial", len(KEYS), 3))
        self.assertEqual([s["keys"] for s in info["sets"]], [6667, 6667, 6666])
        self.assertTrue(all(max(s["false_positive"], s["misreport"]) <= 0.01 for s in info["sets"]))
        self.assertIn("emersion", run("info", out, check=0).stdout.decode())
        self.assertFails(("build", "--kind", "spatial", "--output", self.path("x.blume")), "not in [1, 255]",
                         stdin=b"a\t0\n")
        self.assertFails(("build", "--kind", "spatial", "--value-bits", "8", "--output", self.path("x.blume")),
                         "value bits are for a bloomier map", stdin=b"a\t1\n")
        self.assertFalse(os.path.exists(self.path("x.blume")))
        plan = run("plan", "--items", "1M", "--fpr", "1%", "--kind", "spatial", "--sets", "4", check=0).stdout.decode()
        self.assertIn("spatial", plan)
        self.assertFails(("plan", "--items", "1M", "--fpr", "1%", "--kind", "spatial"), "--sets")

    def test_blocked_cells_answer_as_the_classic_ones(self):
        # --cells blocked puts each key's cells in one 64-byte block: the same answers' guarantees, more cells.
        records = self.path("areas.tsv")
        with open(records, "w") as f:
            f.write("".join(f"{k}\t{1 + i % 3}\n" for i, k in enumerate(KEYS)))
        sizes = {}
        for cells in ("classic", "blocked"):
            out = self.path(f"{cells}.blume")
            run("build", "--kind", "spatial", "--cells", cells, "--input", records, "--output", out, check=0)
            answers = run("query", out, *KEYS[:3000], check=0).stdout.decode().splitlines()
            self.assertTrue(all(int(line.split("\t")[1]) >= 1 + i % 3 for i, line in enumerate(answers)))
            info = json.loads(run("info", "--json", out, check=0).stdout)
            self.assertEqual(info["cell_layout"], cells)
            self.assertTrue(all(max(s["false_positive"], s["misreport"]) <= 0.01 for s in info["sets"]))
            self.assertIn("cell layout:", run("info", out, check=0).stdout.decode())
            sizes[cells] = info["cells"]
        self.assertGreater(sizes["blocked"], sizes["classic"])
        out = self.path("seen.blume")
        run("build", "--kind", "compact", "--cells", "blocked", "--output", out, check=0,
            stdin="".join(f"{k}\t{i + 1}\n" for i, k in enumerate(KEYS[:2000])).encode())
        answers = run("query", out, *KEYS[:2000], check=0).stdout.decode().splitlines()
        self.assertTrue(all(int(line.split("\t")[1]) >= i + 1 for i, line in enumerate(answers)))
        plans = {cells: json.loads(run("plan", "--items", "1M", "--fpr", "1%", "--kind", "compact", "--cells", cells,
                                       "--json", check=0).stdout)
                 for cells in ("classic", "blocked")}
        rows = {cells: next(r for r in plan["kinds"] if r["kind"] == "compact") for cells, plan in plans.items()}
        self.assertGreater(rows["blocked"]["bits"], rows["classic"]["bits"])
        self.assertEqual(rows["blocked"]["cells"] % 16, 0)
        out_plan = run("plan", "--items", "1M", "--fpr", "1%", "--sets", "4", "--cells", "blocked", check=0)
        self.assertEqual(sorted(line.split()[0] for line in out_plan.stdout.decode().splitlines()
                                if line.startswith(("spatial", "compact"))), ["compact", "spatial"])
        self.assertFails(("plan", "--items", "1M", "--fpr", "1%", "--kind", "bloom", "--cells", "blocked"),
                         "--cells is for")
        self.assertFails(("build", "--kind", "spatial", "--cells", "tiled", "--output", self.path("x.blume")),
                         "classic or blocked", stdin=b"a\t1\n")
        self.assertFails(("build", "--kind", "bloom", "--cells", "blocked", "--output", self.path("x.blume")),
                         "--cells is for", stdin=b"a\n")
        self.assertFails(("build", "--kind", "bloomier", "--cells", "blocked", "--output", self.path("x.blume")),
                         "cell layout is for the spatial and compact kinds", stdin=b"a\t1\n")
        self.assertFalse(os.path.exists(self.path("x.blume")))

    def test_compact_approximator_answers_an_upper_bound(self):
        records = self.path("seen.tsv")
        with open(records, "w") as f:
            f.write("".join(f"{k}\t{1_700_000_000 + i}\n" for i, k in enumerate(KEYS)))
        out = self.path("seen.blume")
        run("build", "--kind", "compact", "--input", records, "--output", out, check=0)
        answers = run("query", out, *KEYS[:3000], check=0).stdout.decode().splitlines()
        values = [int(line.split("\t")[1]) for line in answers]
        self.assertTrue(all(v >= 1_700_000_000 + i for i, v in enumerate(values)), "an answer below the value")
        self.assertGreater(sum(v == 1_700_000_000 + i for i, v in enumerate(values)), 0.98 * len(values))
        self.assertEqual(json.loads(run("info", "--json", out, check=0).stdout)["kind"], "compact")
        self.assertFails(("build", "--kind", "compact", "--output", self.path("x.blume")), "does not fit in 32 bits",
                         stdin=b"a\t4294967296\n")
        self.assertFails(("query", "--count", out, "k"), "keeps no counts")

    def test_info_names_what_the_header_size_counts(self):
        rows = json.loads(run("plan", "--items", "20k", "--fpr", "1%", "--json", check=0).stdout)["kinds"]
        plan = {row["kind"]: row for row in rows}
        named = {"counting": "counters", "vi-counting": "counters", "stable": "cells", "iblt": "cells",
                 "quotient": "slots", "cuckoo": "buckets", "dleft": "buckets_per_subtable", "layered": "bits_per_layer",
                 "attenuated": "bits_per_level", "scalable": "first_layer_capacity", "aging": "window",
                 "compaction": "slots"}
        for kind, key in named.items():
            info = json.loads(run("info", "--json", self.build(f"{kind}.blume", "--kind", kind)).stdout)
            self.assertNotIn("bits", info, kind)
            self.assertIn(key, info, kind)
            if key in ("cells", "counters"):
                self.assertEqual(info[key], plan[kind][key], kind)
        self.assertEqual(json.loads(run("info", "--json", self.build("bloom.blume", "--kind", "bloom")).stdout)["bits"],
                         plan["bloom"]["bits"])
        records = self.path("sets.tsv")
        with open(records, "w") as f:
            f.write("".join(f"{k}\t{1 + i % 3}\n" for i, k in enumerate(KEYS)))
        out = self.path("sets.blume")
        run("build", "--kind", "spatial", "--input", records, "--output", out, check=0)
        self.assertIn("cells:", run("info", out, check=0).stdout.decode())
        self.assertNotIn("bits:", run("info", out, check=0).stdout.decode())

    def test_map_files_record_the_rate_asked_for(self):
        # Their own rates (a spatial filter's worst set, a map's 2^-check bits) differ from it; the header
        # records the target, as every other kind's does.
        records = self.path("values.tsv")
        with open(records, "w") as f:
            f.write("".join(f"{k}\t{1 + i % 3}\n" for i, k in enumerate(KEYS)))
        for kind in ("spatial", "compact", "bloomier"):
            for fpr, rate in (("1%", 0.01), ("0.3%", 0.003)):
                out = self.path(f"{kind}.blume")
                run("build", "--kind", kind, "--fpr", fpr, "--input", records, "--output", out, "--force", check=0)
                info = json.loads(run("info", "--json", out, check=0).stdout)
                self.assertEqual((info["planned_capacity"], info["target_FPR"]), (len(KEYS), rate), (kind, fpr))
        self.assertEqual(info["predicted_FPR_now"], 2**-9)  # the map's own rate: 9 check bits
        excluded = self.path("excluded.txt")
        with open(excluded, "w") as f:
            f.write("\n".join(ABSENT) + "\n")
        out = self.path("crl.blume")
        run("build", "--kind", "cascade", "--included", self.keys, "--excluded", excluded, "--output", out, check=0)
        self.assertIsNone(json.loads(run("info", "--json", out, check=0).stdout)["target_FPR"])  # exact: no rate

    def test_vi_counting_capacity_is_where_its_own_model_makes_k_best(self):
        f = self.build("vi.blume", "--kind", "vi-counting", items="100k")
        info = json.loads(run("info", "--json", f, check=0).stdout)
        # The classic m·ln 2 / k would say 57,000 at 0.05%: k = 5 is best for about 85,000 to 105,000 keys.
        self.assertGreater(info["capacity_k_optimal"], 85_000)
        self.assertLess(info["capacity_k_optimal"], 100_000)
        self.assertGreater(info["predicted_FPR_at_capacity"], 0.004)
        self.assertLess(info["predicted_FPR_at_capacity"], 0.01)

    def test_count_prints_how_many_times_a_key_was_added(self):
        for kind in ("counting", "layered"):
            f = self.build(f"{kind}.blume", "--kind", kind, keys=self.keys)
            run("add", f, KEYS[0], KEYS[0], KEYS[1], check=0)
            answers = run("query", "--count", f, KEYS[0], KEYS[1], KEYS[2]).stdout.decode().splitlines()
            counts = [int(line.split("\t")[1]) for line in answers]
            self.assertGreaterEqual(counts[0], 3, kind)
            self.assertGreaterEqual(counts[1], 2, kind)
            self.assertGreaterEqual(counts[2], 1, kind)

    def test_cascade_is_exact_on_its_keys(self):
        included, excluded = self.path("in.txt"), self.path("out.txt")
        with open(included, "w") as f:
            f.write("\n".join(KEYS[:1000]) + "\n")
        with open(excluded, "w") as f:
            f.write("\n".join(ABSENT) + "\n")
        out = self.path("c.blume")
        run("build", "--kind", "cascade", "--included", included, "--excluded", excluded, "--output", out, check=0)
        self.assertEqual(run("query", "-q", out, *KEYS[:1000]).returncode, 0)
        answers = run("query", out, *ABSENT).stdout.decode().splitlines()
        self.assertEqual(answers, [f"{k}\tno" for k in ABSENT])
        self.assertEqual(run("query", out, KEYS[0]).stdout.decode(), f"{KEYS[0]}\tyes\n")
        info = json.loads(run("info", "--json", out, check=0).stdout)
        self.assertEqual((info["included_keys"], info["excluded_keys"]), (1000, len(ABSENT)))
        self.assertEqual(len(info["level_bits"]), info["levels"])
        self.assertFails(("build", "--kind", "cascade", "--included", included, "--output", self.path("x.blume")),
                         "--excluded")
        self.assertFails(("build", "--kind", "cascade", "--included", included, "--excluded", included, "--output",
                          self.path("x.blume")), "also an included key")
        self.assertFails(("bench", "--kind", "cascade"), "own inputs")
        self.assertFalse(os.path.exists(self.path("x.blume")))

    def test_egh_answers_yes_inside_its_zone_and_no_for_the_rest_of_its_universe(self):
        ids = self.path("ids.txt")
        held = [3, 500, 501, 4096, 30030, 65535]
        with open(ids, "w") as f:
            f.write("\n".join(map(str, held)) + "\n")
        out = self.path("e.blume")
        # The zone is the number of keys in the input unless --zone or --memory says otherwise.
        run("build", "--kind", "egh", "--universe", "65536", "--input", ids, "--output", out, check=0)
        answers = run("query", out, stdin="\n".join(map(str, range(65536))).encode()).stdout.decode().splitlines()
        self.assertEqual([a for a in answers if not a.endswith("\tno")], [f"{k}\tyes" for k in held])
        info = json.loads(run("info", "--json", out, check=0).stdout)
        self.assertEqual((info["universe"], info["zone"], info["in_zone"], info["hash"]), (65536, 6, True, "integer-key"))
        self.assertEqual(info["segments"][:4], [2, 3, 5, 7])
        self.assertIn("no key of the universe is a false positive", run("info", out, check=0).stdout.decode())
        # A seventh key leaves the zone: refused unless --allow-overfill, and then "maybe", not "yes".
        self.assertFails(("add", out, "7"), "past its zone of 6 keys")
        run("add", out, "7", "--allow-overfill", check=0)
        self.assertEqual(run("query", out, "7").stdout.decode(), "7\tmaybe\n")
        # Keys are decimal integers of the universe.
        self.assertFails(("add", out, "apple"), "'apple' is not an integer")
        self.assertFails(("add", out, "65536", "--allow-overfill"), "outside the universe [0, 65536)")
        self.assertFails(("query", out, "-5"), "is not an integer")
        self.assertFails(("build", "--kind", "egh", "--input", ids, "--output", self.path("x.blume")), "--universe")
        self.assertFails(("build", "--kind", "egh", "--universe", "2^16", "--zone", "2", "--input", ids, "--output",
                          self.path("x.blume")), "zone is 2 keys and it was given 6")
        self.assertFails(("build", "--universe", "2^16", "--input", ids, "--output", self.path("x.blume")),
                         "kinds of integer keys")
        self.assertFalse(os.path.exists(self.path("x.blume")))
        big = self.path("big.blume")
        run("build", "--kind", "egh", "--universe", "2^64", "--memory", "2KiB", "--input", ids, "--output", big, check=0)
        self.assertGreaterEqual(json.loads(run("info", "--json", big, check=0).stdout)["zone"], 6)
        self.assertEqual(run("query", "-q", big, *map(str, held)).returncode, 0)

    def test_compaction_is_a_visited_set_that_says_what_it_may_have_missed(self):
        out = self.build("c.blume", "--kind", "compaction", "--fpr", "0.1%")
        info = json.loads(run("info", "--json", out, check=0).stdout)
        self.assertEqual((info["kind"], info["signature_bits"]), ("compaction", 12))
        self.assertGreater(info["inserted"], 19900)  # keys it answered "added": the rest were omitted
        self.assertIn("slots", info)
        self.assertNotIn("hashes", info)
        self.assertLessEqual(info["occupied_slots"], 20000)
        self.assertLess(info["expected_omissions"], 20)
        self.assertLess(info["predicted_FPR_now"], 0.001)
        self.assertIn("new keys taken as seen so far", run("info", out, check=0).stdout.decode())
        self.assertEqual(run("query", out, "never-inserted-key").stdout.decode(), "never-inserted-key\tno\n")
        self.assertFails(("erase", out, "k"), "compaction")

    def test_egh_plan_says_what_the_zone_costs(self):
        out = run("plan", "--kind", "egh", "--universe", "2^32", "--zone", "8", check=0).stdout.decode()
        self.assertIn("no false positive while it holds at most 8 keys", out)
        self.assertIn("less than one false positive in the whole universe", out)
        plan = json.loads(run("plan", "--kind", "egh", "--universe", "2^32", "--zone", "8", "--json", check=0).stdout)
        self.assertEqual(plan["primes"][:3], [2, 3, 5])
        self.assertEqual(plan["bits"], sum(plan["primes"]))
        self.assertEqual(plan["classic_bits_for_universe"], 370)
        budget = json.loads(run("plan", "--kind", "egh", "--universe", "2^32", "--memory", f"{(plan['bits'] + 7) // 8}B",
                                "--json", check=0).stdout)
        self.assertEqual(budget["zone"], 8)
        self.assertFails(("plan", "--kind", "egh", "--zone", "8"), "--universe")
        self.assertFails(("plan", "--kind", "egh", "--universe", "2^32"), "--zone or --memory")
        self.assertFails(("plan", "--kind", "egh", "--universe", "1000", "--zone", "1001"), "exceeds the universe")

    def test_nul_delimited_keys_and_duplicates(self):
        nul = self.path("keys.nul")
        with open(nul, "wb") as f:
            f.write(b"\0".join(k.encode() for k in KEYS + KEYS[:100]) + b"\0")
        f = self.build("f.blume", "--format", "nul", keys=nul)
        self.assertEqual(run("query", "-q", f, *KEYS[:300]).returncode, 0)

    def test_quiet_exit_status(self):
        f = self.build("f.blume")
        self.assertEqual(run("query", "--quiet", f, KEYS[0]).stdout, b"")
        self.assertEqual(run("query", "--quiet", f, KEYS[0]).returncode, 0)
        self.assertEqual(run("query", "--quiet", f, KEYS[0], "certainly-not-there-xyz").returncode, 1)

    def test_progress_line_only_on_a_terminal(self):
        piped = run("build", "--items", "20k", "--input", self.keys, "--output", self.path("p.blume"), check=0)
        self.assertEqual(piped.stderr, b"")
        if shutil.which("script") is None:
            self.skipTest("script(1) is not installed")
        tty = subprocess.run(["script", "-qec", f"{BLUME} build --items 20k --input {self.keys} --output "
                              f"{self.path('t.blume')}", "/dev/null"], capture_output=True)
        self.assertEqual(tty.returncode, 0)
        self.assertIn(b"keys/s", tty.stdout)

    def test_full_cuckoo_filter_is_an_error_and_writes_nothing(self):
        self.assertFails(("build", "--kind", "cuckoo", "--items", "1k", "--input", self.keys, "--output",
                          self.path("c.blume")), "full")
        self.assertFalse(os.path.exists(self.path("c.blume")))


class AddEraseMergeEstimate(Tool):
    def test_add_then_query(self):
        f = self.build("f.blume")
        self.assertEqual(run("query", "-q", f, "late@example.com").returncode, 1)
        run("add", f, "late@example.com", check=0)
        run("add", f, stdin=b"later@example.com\n", check=0)
        self.assertEqual(run("query", "-q", f, "late@example.com", "later@example.com").returncode, 0)

    def test_erase_where_sound(self):
        f = self.build("c.blume", "--kind", "counting")
        out = run("erase", f, KEYS[0], "never-inserted@example.com").stdout.decode()
        self.assertIn(f"{KEYS[0]}\terased", out)
        self.assertIn("never-inserted@example.com\tnot found", out)
        self.assertEqual(run("query", "-q", f, KEYS[0]).returncode, 1)
        b = self.build("b.blume", "--kind", "bloom")
        before = read(b)
        self.assertFails(("erase", b, KEYS[0]), "erase is not sound")
        self.assertEqual(read(b), before)

    def test_erase_of_a_key_the_filter_refuses_changes_nothing(self):
        # Every kind that erases: a key answered "no" is "not found", exits 1 and leaves the file as it was
        # (what erase --help, the README and the headers promise); keys that were added are "erased", exit 0.
        for kind in ("counting", "vi-counting", "dleft", "cuckoo", "quotient", "iblt"):
            with self.subTest(kind=kind):
                f = self.build(f"{kind}.blume", "--kind", kind)
                answers = run("query", f, *ABSENT[:300]).stdout.decode().splitlines()
                refused = [line.split("\t")[0] for line in answers if line.endswith("\tno")]
                self.assertGreater(len(refused), 250)
                before = read(f)
                result = run("erase", f, *refused)
                self.assertEqual(result.returncode, 1)
                self.assertEqual(result.stdout.decode(), "".join(f"{k}\tnot found\n" for k in refused))
                self.assertEqual(read(f), before)
                self.assertEqual(run("erase", "-q", f, refused[0]).returncode, 1)
                self.assertEqual(read(f), before)
                mixed = run("erase", f, KEYS[1], refused[0])
                self.assertEqual(mixed.returncode, 1)
                self.assertEqual(mixed.stdout.decode(), f"{KEYS[1]}\terased\n{refused[0]}\tnot found\n")
                self.assertEqual(run("erase", f, KEYS[2], KEYS[3]).returncode, 0)

    def test_erase_help_states_the_hazard(self):
        text = run("erase", "--help", check=0).stdout.decode()
        self.assertIn("Erase only keys that were added", text)
        for kind in ("counting", "vi-counting", "dleft", "cuckoo", "quotient", "iblt"):
            self.assertIn(kind, text)

    def test_merge_intersect_estimate(self):
        first, second = self.path("first.txt"), self.path("second.txt")
        with open(first, "w") as f:
            f.write("\n".join(KEYS[:12000]) + "\n")
        with open(second, "w") as f:
            f.write("\n".join(KEYS[8000:]) + "\n")
        a = self.build("a.blume", "--kind", "bloom", keys=first)
        b = self.build("b.blume", "--kind", "bloom", keys=second)
        union = self.path("u.blume")
        run("merge", a, b, "--output", union, check=0)
        self.assertEqual(run("query", "-q", union, *KEYS[::50]).returncode, 0)
        both = self.path("i.blume")
        run("intersect", a, b, "--output", both, check=0)
        self.assertEqual(run("query", "-q", both, *KEYS[8000:12000:20]).returncode, 0)
        est = json.loads(run("estimate", "--json", a, b, check=0).stdout)
        self.assertAlmostEqual(est["a"], 12000, delta=600)
        self.assertAlmostEqual(est["union"], 20000, delta=1000)
        self.assertAlmostEqual(est["intersection"], 4000, delta=800)
        self.assertAlmostEqual(est["jaccard"], 0.2, delta=0.05)
        self.assertIn("Jaccard", run("estimate", a, b, check=0).stdout.decode())

    def test_incompatible_inputs_name_what_differs(self):
        a = self.build("a.blume", "--kind", "bloom")
        b = self.build("b.blume", "--kind", "bloom", items="40k")
        c = self.build("c.blume", "--kind", "cuckoo", items="40k")
        self.assertFails(("merge", a, b, "--output", self.path("m.blume")), "differ")
        self.assertFails(("merge", a, c, "--output", self.path("m.blume")), "kinds differ")
        self.assertFalse(os.path.exists(self.path("m.blume")))
        self.assertFails(("estimate", c, c), "bit-array")

    def test_bench_runs(self):
        out = run("bench", "--items", "20k", "--kind", "split-block", check=0).stdout.decode()
        self.assertIn("split-block", out)


class Absorb(Tool):
    """A line of nodes n1 - n2 - n3 whose attenuated filters learn from each other, as a distance-vector
    round would: n3 offers the printer, so n1 finds it two hops away."""

    def node(self, name, *services, items="100"):
        out = self.path(name)
        run("build", "--kind", "attenuated", "--items", items, "--output", out, *(["--allow-empty"] if not services else []),
            stdin="".join(s + "\n" for s in services).encode(), check=0)
        return out

    def test_absorb_shifts_neighbours_one_level_deeper(self):
        n1, n2, n3 = self.node("n1.blume", "fax"), self.node("n2.blume", "scanner"), self.node("n3.blume", "printer")
        run("absorb", n2, n3, check=0)
        run("absorb", n1, n2, check=0)
        info = json.loads(run("info", "--json", n1, check=0).stdout)
        self.assertEqual(info["kind"], "attenuated")
        self.assertEqual(info["levels"], 4)
        self.assertEqual(info["inserted"], 1)  # only its own key: absorbed levels are not inserts
        counts = [round(level["estimated_count"]) for level in info["level_fill"]]
        self.assertEqual(counts, [1, 1, 1, 0])  # fax here, scanner one hop away, printer two
        self.assertIn("level fill", run("info", n1, check=0).stdout.decode())
        # query answers the nearest level: where to send the request, or no.
        self.assertEqual(run("query", n1, "fax", "scanner", "printer", check=0).stdout.decode(),
                         "fax\t0\nscanner\t1\nprinter\t2\n")
        self.assertEqual(run("query", n1, "plotter").stdout.decode(), "plotter\tno\n")
        # Two hops at once, into another file, leaving the target as it was.
        before = read(n1)
        far = self.path("far.blume")
        run("absorb", n1, n3, "--hops", "3", "--output", far, check=0)
        self.assertEqual(read(n1), before)
        counts = [round(level["estimated_count"]) for level in json.loads(run("info", "--json", far).stdout)["level_fill"]]
        self.assertEqual(counts, [1, 1, 1, 1])
        # Adding keys works as for any filter (level 0).
        run("add", n1, "copier", check=0)
        self.assertEqual(run("query", "-q", n1, "copier").returncode, 0)

    def test_absorb_refuses_other_kinds_geometries_and_overfill(self):
        n1 = self.node("n1.blume", "fax")
        bloom = self.build("b.blume", "--kind", "bloom")
        before = read(n1)
        self.assertFails(("absorb", bloom, n1), "attenuated")
        self.assertFails(("absorb", n1, bloom), "kinds differ")
        self.assertFails(("absorb", n1, self.node("big.blume", "fax", items="1000")), "differ")
        self.assertFails(("absorb", n1, n1, "--hops", "0"), "hops")
        self.assertFails(("absorb", n1, n1, "--hops", "64"), "past the filter's")
        crowded = self.path("crowded.blume")
        run("build", "--kind", "attenuated", "--items", "100", "--allow-overfill", "--output", crowded,
            stdin="".join(f"svc{i}\n" for i in range(400)).encode(), check=0)
        self.assertFails(("absorb", n1, crowded), "--allow-overfill")
        self.assertEqual(read(n1), before)
        run("absorb", n1, crowded, "--allow-overfill", check=0)


class BadInput(Tool):
    def test_missing_truncated_corrupt_and_foreign_files(self):
        f = self.build("f.blume")
        data = read(f)
        self.assertFails(("query", self.path("missing.blume"), "x"), "missing.blume")
        truncated = self.path("truncated.blume")
        with open(truncated, "wb") as out:
            out.write(data[:len(data) // 2])
        self.assertFails(("info", truncated), "")
        corrupt = self.path("corrupt.blume")
        with open(corrupt, "wb") as out:
            out.write(data[:500] + bytes([data[500] ^ 1]) + data[501:])
        self.assertFails(("query", corrupt, "x"), "checksum")
        self.assertFails(("info", self.keys), "")
        self.assertFails(("info", self.dir), "")

    def test_unknown_kind_and_malformed_numbers(self):
        self.assertFails(("build", "--kind", "nope", "--items", "10", "--input", self.keys, "--output",
                          self.path("x")), "unknown filter kind 'nope'")
        self.assertFails(("build", "--items", "10", "--fpr", "2", "--input", self.keys, "--output", self.path("x")),
                         "--fpr")
        self.assertFails(("build", "--items", "-5", "--input", self.keys, "--output", self.path("x")), "--items")
        self.assertFails(("build", "--items", "1e30", "--input", self.keys, "--output", self.path("x")), "--items")
        self.assertFalse(os.path.exists(self.path("x")))

    def test_unreadable_input_and_unwritable_output_leave_the_old_file(self):
        old = self.build("old.blume")
        before = read(old)
        self.assertFails(("build", "--items", "10", "--input", self.path("no-such-keys.txt"), "--output", old),
                         "no-such-keys.txt")
        self.assertFails(("build", "--items", "10", "--input", self.dir, "--output", old), "")
        self.assertEqual(read(old), before)
        self.assertFails(("build", "--items", "20k", "--input", self.keys, "--output",
                          self.path("no-such-dir/out.blume")), "no-such-dir")
        self.assertEqual(sorted(os.listdir(self.dir)), ["keys.txt", "old.blume"])  # no temporary file left

    def test_full_disk(self):
        mount = self.path("small")
        os.mkdir(mount)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mount], capture_output=True).returncode:
            self.skipTest("cannot mount a small tmpfs here")
        try:
            out = os.path.join(mount, "big.blume")
            self.assertFails(("build", "--items", "1M", "--input", self.keys, "--output", out), "")
            self.assertEqual(os.listdir(mount), [])
        finally:
            subprocess.run(["umount", mount])


class ConcurrentWriters(Tool):
    def test_concurrent_adders_lose_no_key_and_count_every_insert(self):
        f = self.build("c.blume", items="30k")
        writers, per_writer = 4, 60
        errors = []

        def writer(w):
            for i in range(per_writer):
                r = run("add", f, f"w{w}-key{i}")
                if r.returncode != 0:
                    errors.append(r.stderr.decode())

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        added = [f"w{w}-key{i}" for w in range(writers) for i in range(per_writer)]
        out = run("query", f, stdin=("\n".join(added) + "\n").encode(), check=0).stdout.decode()
        self.assertEqual(out.count("\tmaybe\n"), len(added))
        info = json.loads(run("info", "--json", f, check=0).stdout)
        self.assertEqual(info["inserted"], len(KEYS) + len(added))

    def test_no_wait_fails_at_once_while_another_writer_holds_the_file(self):
        f = self.build("c.blume")
        with open(f, "rb") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            start = time.monotonic()
            self.assertFails(("add", "--no-wait", f, "late@example.com"), "locked")
            self.assertLess(time.monotonic() - start, 2)
            # Readers never wait for writers.
            self.assertEqual(run("query", "-q", f, KEYS[0]).returncode, 0)
            # A waiting writer proceeds once the lock is released.
            waiting = subprocess.Popen([BLUME, "add", f, "late@example.com"], stderr=subprocess.DEVNULL)
            time.sleep(0.3)
            self.assertIsNone(waiting.poll())
        self.assertEqual(waiting.wait(timeout=30), 0)
        self.assertEqual(run("query", "-q", f, "late@example.com").returncode, 0)


class Overfill(Tool):
    def test_overfilled_build_is_refused_naming_count_capacity_and_rate(self):
        out = self.path("o.blume")
        line = self.assertFails(("build", "--items", "2k", "--input", self.keys, "--output", out), "--allow-overfill")
        for word in ("2000", "20000", "capacity", "target 1.000%"):
            self.assertIn(word, line)
        self.assertFalse(os.path.exists(out))
        run("build", "--items", "2k", "--input", self.keys, "--output", out, "--allow-overfill", check=0)
        self.assertTrue(os.path.exists(out))

    def test_build_without_items_sizes_the_filter_from_its_input(self):
        for source in ("file", "stdin"):
            out = self.path(f"sized-{source}.blume")
            if source == "file":
                run("build", "--input", self.keys, "--output", out, check=0)
            else:
                run("build", "--output", out, stdin=read(self.keys), check=0)
            info = json.loads(run("info", "--json", out, check=0).stdout)
            self.assertEqual(info["planned_capacity"], len(KEYS))
            self.assertEqual(info["target_FPR"], 0.01)
            absent = run("query", out, stdin=("\n".join(ABSENT) + "\n").encode()).stdout.decode()
            self.assertLess(absent.count("\tmaybe"), 0.02 * len(ABSENT))

    def test_build_without_items_counts_a_pipe_given_by_name(self):
        out = self.path("piped.blume")
        run("build", "--input", "/dev/stdin", "--output", out, stdin=read(self.keys), check=0)
        self.assertEqual(json.loads(run("info", "--json", out, check=0).stdout)["planned_capacity"], len(KEYS))

    def test_add_past_the_planned_capacity_is_refused_and_writes_nothing(self):
        f = self.build("full.blume", items="20k")
        before = read(f)
        extra = ("\n".join(ABSENT[:15000]) + "\n").encode()
        self.assertFails(("add", f), "capacity of 20000", stdin=extra)
        self.assertEqual(read(f), before)
        run("add", "--allow-overfill", f, stdin=extra, check=0)
        self.assertNotEqual(read(f), before)

    def test_empty_input_is_an_error_unless_allowed(self):
        empty = self.path("empty.txt")
        open(empty, "w").close()
        self.assertFails(("build", "--input", empty, "--output", self.path("e.blume")), "--allow-empty")
        self.assertFails(("build", "--items", "10", "--input", empty, "--output", self.path("e.blume")), "no keys")
        run("build", "--allow-empty", "--input", empty, "--output", self.path("e.blume"), check=0)
        self.assertEqual(run("query", "-q", self.path("e.blume"), "anything").returncode, 1)

    def test_plan_refuses_a_budget_that_buys_no_useful_rate_and_says_when_it_caps(self):
        self.assertFails(("plan", "--items", "100M", "--memory", "1MiB"), "useful rate")
        out = run("plan", "--items", "1M", "--memory", "1TiB", "--kind", "bloom", check=0).stdout.decode()
        self.assertIn("capped", out)
        plan = json.loads(run("plan", "--items", "1M", "--memory", "1TiB", "--kind", "bloom", "--json", check=0).stdout)
        self.assertEqual(plan["capped_to_bytes"], 2**40 // 8)


class Forgetting(Tool):
    def test_stable_and_aging_answer_absent_never_no(self):
        for kind in ("stable", "aging"):
            f = self.build(f"{kind}.blume", "--kind", kind, items="5k")
            out = run("query", f, stdin=("\n".join(KEYS[:100] + ABSENT[:100]) + "\n").encode()).stdout.decode()
            self.assertNotIn("\tno\n", out)
            self.assertIn("\tabsent\n", out)
            info = json.loads(run("info", "--json", f, check=0).stdout)
            self.assertTrue(info["forgets"])
            text = run("info", f, check=0).stdout.decode()
            self.assertIn("false negatives by design", text)
        self.assertFalse(json.loads(run("info", "--json", self.build("b.blume"), check=0).stdout)["forgets"])
        helptext = run("query", "--help", check=0).stdout.decode()
        self.assertIn("absent", helptext)
        self.assertIn("not seen recently", helptext)


class Reconcile(Tool):
    """Two sides sharing most keys: B sketches its keys, A sends a table sized from the sketch, B decodes."""

    def sides(self, only_a, only_b, shared=KEYS[:19000]):
        a, b = self.path("a.txt"), self.path("b.txt")
        with open(a, "w") as f:
            f.write("\n".join(shared + only_a) + "\n")
        with open(b, "w") as f:
            f.write("\n".join(only_b + shared + only_b[:3]) + "\n")  # duplicates are one key
        return a, b

    def test_reconcile_round_trip(self):
        only_a = [f"a-only-{i}" for i in range(25)]
        only_b = [f"b-only-{i}" for i in range(12)]
        a, b = self.sides(only_a, only_b)
        sketch, table = self.path("b.sketch"), self.path("a.iblt")
        run("sketch", "--input", b, "--output", sketch, check=0)
        self.assertEqual(len(read(sketch)), 192 + 32 * 80 * 16)
        made = run("diff-sketch", "--input", a, "--estimate", sketch, "--output", table, check=0)
        self.assertIn("37 differences (counted exactly", made.stderr.decode())
        result = run("reconcile", table, "--input", b, check=0)
        lines = result.stdout.decode().splitlines()
        self.assertEqual(sorted(l for l in lines if l.startswith("+")), sorted("+" + k for k in only_b))
        digests = [l for l in lines if l.startswith("-")]
        self.assertEqual(len(digests), len(only_a))
        self.assertTrue(all(len(d) == 17 and int(d[1:], 16) >= 0 for d in digests), digests)
        self.assertIn("only their side can name them", result.stderr.decode())
        # The same from standard input.
        piped = run("reconcile", table, "--input", "-", stdin=read(b), check=0)
        self.assertEqual(sorted(piped.stdout.decode().splitlines()), sorted(lines))
        # A's side can name its own keys from the digests: the digest is XXH3-128's low half under the seed.
        self.assertEqual(run("info", table, check=0).returncode, 0)

    def test_equal_sets_reconcile_to_nothing(self):
        a, b = self.sides([], [])
        sketch, table = self.path("b.sketch"), self.path("a.iblt")
        run("sketch", "--input", b, "--output", sketch, check=0)
        run("diff-sketch", "--input", a, "--estimate", sketch, "--output", table, check=0)
        self.assertEqual(run("reconcile", table, "--input", b, check=0).stdout, b"")

    def test_larger_difference_than_the_table_fails_clearly(self):
        a, b = self.sides([f"a-only-{i}" for i in range(300)], [])
        table = self.path("small.iblt")
        run("diff-sketch", "--input", a, "--differences", "5", "--output", table, check=0)
        self.assertFails(("reconcile", table, "--input", b), "could not decode the difference")

    def test_refuses_what_is_not_a_sketch_or_a_table(self):
        a, b = self.sides([], [])
        bloom = self.build("f.blume")
        sketch = self.path("b.sketch")
        run("sketch", "--input", b, "--output", sketch, check=0)
        self.assertFails(("diff-sketch", "--input", a, "--estimate", bloom, "--output", self.path("x")), "not a sketch")
        self.assertFails(("reconcile", sketch, "--input", b), "is a sketch")
        self.assertFails(("reconcile", bloom, "--input", b), "not an iblt table")
        self.assertFails(("diff-sketch", "--input", a, "--output", self.path("x")), "--estimate SKETCH or --differences")


class Interrupted(Tool):
    def test_a_signal_during_the_write_leaves_no_temporary_file(self):
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            out = self.path("big.blume")
            # A large, mostly empty filter: its write takes long enough to be caught in the act.
            proc = subprocess.Popen([BLUME, "build", "--items", "400M", "--input", self.keys, "--output", out],
                                    stderr=subprocess.DEVNULL)
            caught = False
            deadline = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < deadline:
                if any(name.startswith(".big.blume.tmp.") for name in os.listdir(self.dir)):
                    proc.send_signal(sig)
                    caught = True
                    break
                time.sleep(0.001)
            proc.wait(timeout=60)
            if not caught:
                self.skipTest("the write finished before it could be interrupted")
            self.assertEqual(proc.returncode, -sig)
            self.assertEqual([n for n in os.listdir(self.dir) if ".tmp." in n], [])
            self.assertFalse(os.path.exists(out))

    def test_a_signal_the_parent_ignores_stays_ignored(self):
        out = self.path("nohup.blume")
        ignore_hup = lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup does
        proc = subprocess.Popen([BLUME, "build", "--items", "200M", "--input", self.keys, "--output", out],
                                stderr=subprocess.DEVNULL, preexec_fn=ignore_hup)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if any(".tmp." in name for name in os.listdir(self.dir)):
                proc.send_signal(signal.SIGHUP)
                break
            time.sleep(0.001)
        self.assertEqual(proc.wait(timeout=120), 0)
        self.assertTrue(os.path.exists(out))


class SavingReplacesTheFileNotThePath(Tool):
    """A save writes the file a path names: through symbolic links, keeping mode and owner; it refuses what
    it cannot replace without losing something, and cleans up after writers killed mid-save."""

    def answers(self, path, key):
        return run("query", "--quiet", path, key).returncode == 0

    def test_a_symbolic_link_is_written_through_to_its_target(self):
        real = self.build("real.blume")
        os.mkdir(self.path("links"))
        link = self.path("links/link.blume")
        os.symlink("../real.blume", link)  # relative to the link's own directory
        chain = self.path("chain.blume")
        os.symlink(link, chain)  # a link to a link
        for name, path in (("via-link", link), ("via-chain", chain)):
            run("add", path, name, check=0)
            self.assertTrue(os.path.islink(path))
            self.assertTrue(self.answers(real, name), name)
        self.assertTrue(os.path.islink(link))
        run("build", "--items", "100", "--input", self.keys, "--output", chain, "--allow-overfill", check=0)
        self.assertTrue(os.path.islink(chain) and os.path.islink(link))
        self.assertEqual(json.loads(run("info", "--json", real, check=0).stdout)["planned_capacity"], 100)
        dangling = self.path("dangling.blume")
        os.symlink("created.blume", dangling)
        run("build", "--items", "20k", "--input", self.keys, "--output", dangling, check=0)
        self.assertTrue(os.path.islink(dangling) and os.path.isfile(self.path("created.blume")))
        self.assertEqual([n for n in os.listdir(self.dir) if ".tmp." in n], [])

    def test_hard_links_are_refused_unless_forced_which_rewrites_in_place(self):
        real = self.build("real.blume")
        other = self.path("other.blume")
        os.link(real, other)
        before = read(real)
        self.assertIn("2 hard links", self.assertFails(("add", other, "k1"), "--force"))
        self.assertEqual(read(real), before)
        self.assertEqual(os.stat(real).st_nlink, 2)
        run("add", "--force", other, "k1", check=0)
        self.assertEqual(os.stat(real).st_ino, os.stat(other).st_ino)
        self.assertTrue(self.answers(real, "k1") and self.answers(other, "k1"))
        self.assertEqual([n for n in os.listdir(self.dir) if ".tmp." in n], [])

    def test_what_is_not_a_regular_file_is_refused_even_forced(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        os.mkdir(self.path("dir.blume"))
        cases = ((fifo, "a FIFO"), (self.path("dir.blume"), "a directory"), ("/dev/null", "a character device"))
        for target, what in cases:
            for force in ((), ("--force",)):
                args = ("build", "--items", "100", "--input", self.keys, "--allow-overfill", "--output", target, *force)
                result = subprocess.run([BLUME, *args], capture_output=True, timeout=30)
                self.assertEqual(result.returncode, 2, (target, result.stderr))
                self.assertIn(what, result.stderr.decode())
                self.assertNotIn("--force", result.stderr.decode())
        self.assertTrue(stat_is(fifo, "S_ISFIFO") and stat_is("/dev/null", "S_ISCHR"))
        real = self.build("real.blume")
        link = self.path("to-null.blume")
        os.symlink("/dev/null", link)
        self.assertFails(("merge", real, real, "--output", link), "a character device")
        self.assertTrue(stat_is("/dev/null", "S_ISCHR"))

    def test_mode_and_owner_are_kept_and_read_only_files_refused_unless_forced(self):
        real = self.build("real.blume")
        os.chmod(real, 0o600)
        run("add", real, "k1", check=0)
        self.assertEqual(os.stat(real).st_mode & 0o7777, 0o600)
        os.chmod(real, 0o444)
        before = read(real)
        self.assertIn("read-only", self.assertFails(("add", real, "k2"), "--force"))
        self.assertEqual((read(real), os.stat(real).st_mode & 0o7777), (before, 0o444))
        run("add", "--force", real, "k2", check=0)
        self.assertEqual(os.stat(real).st_mode & 0o7777, 0o444)
        self.assertTrue(self.answers(real, "k2"))
        if os.geteuid() == 0:
            os.chmod(real, 0o640)
            os.chown(real, 65534, 65534)
            run("add", real, "k3", check=0)
            st = os.stat(real)
            self.assertEqual((st.st_uid, st.st_gid, st.st_mode & 0o7777), (65534, 65534, 0o640))
        # A new file gets 0666 less the umask, as any program's.
        new = self.path("new.blume")
        subprocess.run(["sh", "-c", f'umask 027 && exec "$0" build --items 100 --input "$1" --output "$2" '
                        "--allow-overfill", BLUME, self.keys, new], check=True, capture_output=True)
        self.assertEqual(os.stat(new).st_mode & 0o7777, 0o640)

    def test_temporary_files_of_killed_writers_are_removed_by_the_next_save(self):
        out = self.path("big.blume")
        proc = subprocess.Popen([BLUME, "build", "--items", "400M", "--input", self.keys, "--output", out],
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if any(name.startswith(".big.blume.tmp.") for name in os.listdir(self.dir)):
                proc.kill()
                break
            time.sleep(0.001)
        proc.wait(timeout=60)
        if proc.returncode != -signal.SIGKILL:
            self.skipTest("the write finished before it could be killed")
        left = [n for n in os.listdir(self.dir) if ".tmp." in n]
        self.assertEqual(len(left), 1)
        # Older writers named theirs without a process id: stale once unchanged for a minute.
        old = self.path(".big.blume.tmp.Ab12Cd")
        with open(old, "wb") as f:
            f.write(b"x")
        os.utime(old, (time.time() - 120, time.time() - 120))
        # A live writer's temporary stays: this process is alive and holds its flock.
        live = self.path(f".big.blume.tmp.{os.getpid()}.live0000")
        with open(live, "wb") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            run("build", "--items", "20k", "--input", self.keys, "--output", out, check=0)
            self.assertEqual([n for n in os.listdir(self.dir) if ".tmp." in n], [os.path.basename(live)])


def stat_is(path, test):
    import stat
    return getattr(stat, test)(os.stat(path).st_mode)


class Conventions(Tool):
    def test_version(self):
        # One version, CMake's project(VERSION): the tool and info --json report it as written there.
        import re
        cmake = open(os.path.join(os.path.dirname(__file__), "..", "..", "CMakeLists.txt"), encoding="utf-8").read()
        version = re.search(r"project\(blume VERSION ([0-9.]+)", cmake).group(1)
        out = run("--version", check=0).stdout.decode()
        self.assertTrue(out.startswith(f"blume {version} (file format 2)"), out)
        info = json.loads(run("info", "--json", self.build("v.blume"), check=0).stdout)
        self.assertEqual(info["version"], version)
        self.assertEqual(info["format_version"], 2)

    def test_option_errors_are_one_line_prefixed_and_usage_says_blume(self):
        self.assertTrue(self.assertFails(("plan", "--items", "1", "--fpr", "1%", "--bogus"), "--bogus").startswith("blume: "))
        self.assertTrue(self.assertFails(("plan",), "--items").startswith("blume: "))
        self.assertTrue(self.assertFails(("query", self.path("missing.blume"), "k"), "missing").startswith("blume: "))
        helptext = run("--help", check=0).stdout.decode()
        self.assertIn("blume", helptext.splitlines()[0] + helptext.splitlines()[1])
        self.assertNotIn("/", helptext.split("Usage:")[1].split("\n")[0] if "Usage:" in helptext else "")

    def test_a_full_output_is_an_error_never_an_abort_or_success(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full here")
        f = self.build("f.blume")
        counting = self.build("c.blume", "--kind", "counting")
        sketch = self.path("s.blume")
        run("diff-sketch", "--differences", "30000", "--input", self.keys, "--output", sketch, check=0)
        many = ("\n".join(KEYS + ABSENT) + "\n").encode()
        cases = (("query", f), ("query", "--count", counting), ("info", f), ("info", "--json", f),
                 ("plan", "--items", "1M", "--fpr", "1%"), ("reconcile", sketch, "--input", "/dev/null"),
                 ("build", "--items", "20k", "--input", self.keys, "--output", "-"), ("erase", counting, "nothing"),
                 ("estimate", f, f), ("--help",))
        for args in cases:
            with open("/dev/full", "wb") as full:
                result = subprocess.run([BLUME, *args], input=many, stdout=full, stderr=subprocess.PIPE)
            self.assertEqual(result.returncode, 2, (args, result.stderr))
            self.assertIn("standard output", result.stderr.decode(), args)
            self.assertIn("No space left on device", result.stderr.decode(), args)

    def test_unknown_options_are_named_before_missing_required_ones(self):
        self.assertIn("--bogus", self.assertFails(("build", "--bogus"), "unknown option"))
        self.assertIn("--bogus", self.assertFails(("build", "--input", self.keys, "--bogus=1"), "unknown option"))
        self.assertFails(("build", "--input", self.keys), "--output is required")

    def test_tiny_rates_print_as_numbers_and_exactly_items_keys_is_not_overfill(self):
        keys = self.path("k1000.txt")
        with open(keys, "w") as f:
            f.write("".join(f"k{i}\n" for i in range(1000)))
        for rate in ("1e-19", "1e-18"):
            out = self.path(f"tiny{rate}.blume")
            run("build", "--kind", "bloom", "--items", "1000", "--fpr", rate, "--input", keys, "--output", out,
                check=0)
            info = run("info", out, check=0).stdout.decode()
            self.assertNotIn(" 0.00000%", info)
        self.assertIn("e-", run("plan", "--items", "1000", "--fpr", "1e-19", check=0).stdout.decode())
        # Below 2^-64 a key would cost more bits than any plan gives: refused, saying so.
        for rate in ("1e-30", "1e-40"):
            self.assertFails(("build", "--kind", "bloom", "--items", "1000", "--fpr", rate, "--input", keys,
                              "--output", self.path("never.blume")), "smallest a plan accepts")

    def test_output_dash_writes_the_filter_to_standard_output(self):
        data = run("build", "--items", "20k", "--input", self.keys, "--output", "-", check=0).stdout
        path = self.path("piped.blume")
        with open(path, "wb") as f:
            f.write(data)
        self.assertEqual(run("query", "-q", path, KEYS[5]).returncode, 0)
        merged = run("merge", path, path, "--output", "-", check=0).stdout
        self.assertEqual(merged[192:], data[192:])  # the union of a filter with itself: the same bits

    def test_plan_json(self):
        plan = json.loads(run("plan", "--items", "100M", "--fpr", "1%", "--json", check=0).stdout)
        bloom = next(k for k in plan["kinds"] if k["kind"] == "bloom")
        self.assertEqual(bloom["bits"], 958505838)
        self.assertEqual(bloom["hashes"], 7)

    def test_empty_argument_key_is_an_error_and_trailing_cr_is_dropped_everywhere(self):
        f = self.build("cr.blume")
        self.assertFails(("query", f, ""), "empty")
        self.assertEqual(run("query", "-q", f, KEYS[3] + "\r").returncode, 0)
        crlf = self.path("crlf.txt")
        with open(crlf, "wb") as out:
            out.write(b"alpha\r\nbeta\r\n")
        g = self.path("crlf.blume")
        run("build", "--items", "10", "--input", crlf, "--output", g, check=0)
        self.assertEqual(run("query", "-q", g, "alpha", "beta").returncode, 0)
        self.assertEqual(run("query", "-q", g, "alpha\r").returncode, 0)


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "v1")
PLANNED_FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "v2-planned")
# The fixtures' info was written when info called the header's primary field "bits" for every kind; it now
# names what the field holds.
PRIMARY_FIELD = {"counting": "counters", "stable": "cells", "cuckoo": "buckets", "quotient": "slots",
                 "scalable": "first_layer_capacity", "aging": "window"}


def info_key(kind, field):
    return PRIMARY_FIELD.get(kind, field) if field == "bits" else field


# What a version-1 file says about itself that changed since, on purpose: the Golomb-coded set's in-memory size
# (`size`) holds the fields of its newer bucket index layout too (32 bytes more); its file is read as it is. The
# quotient filter's first layout is converted on load to the rank-and-select layout, whose table for the same
# 1,112 slots is 22 blocks of 73 bytes (4 of them overflow blocks) instead of 1,392 bytes.
CHANGED_ON_PURPOSE = {("gcs", "size"): 1288, ("quotient", "size"): 1750}


class Version1Fixtures(Tool):
    """Files written by a blume of format version 1 (tests/fixtures/v1/make.sh) load and answer as then."""

    def test_every_version_1_file_answers_and_describes_itself_as_before(self):
        keys = [f"fixture-key-{i}@example.com" for i in range(1000)] + [f"absent-key-{i}@example.org" for i in range(1000)]
        stdin = ("\n".join(keys) + "\n").encode()
        names = sorted(n[:-len(".blume")] for n in os.listdir(FIXTURES) if n.endswith(".blume"))
        self.assertEqual(len(names), 17)
        for name in names:
            path = os.path.join(FIXTURES, name + ".blume")
            out = run("query", path, stdin=stdin).stdout.decode().splitlines()
            codes = {"maybe": "m", "no": "n", "absent": "n", "yes": "y"}
            answers = "".join(codes.get(line.split("\t")[1], line.split("\t")[1] + ",") for line in out)
            with open(os.path.join(FIXTURES, name + ".answers")) as f:
                self.assertEqual(answers, f.read().strip(), name)
            with open(os.path.join(FIXTURES, name + ".info.json")) as f:
                before = json.load(f)
            now = json.loads(run("info", "--json", path, check=0).stdout)
            self.assertEqual(now["format_version"], 1, name)
            self.assertIsNone(now["planned_capacity"], name)
            for field, value in before.items():
                value = CHANGED_ON_PURPOSE.get((name, field), value)
                self.assertEqual(now[info_key(name, field)], value, (name, field))

    def test_a_split_block_file_of_xxh3_128_keeps_its_hash_and_refuses_to_merge_with_xxh3_64(self):
        old = self.path("old.blume")
        shutil.copy(os.path.join(FIXTURES, "split-block.blume"), old)
        run("add", old, "late@example.com", check=0)
        self.assertEqual(json.loads(run("info", "--json", old, check=0).stdout)["hash"], "xxh3-128")
        self.assertEqual(run("query", "-q", old, "fixture-key-7@example.com", "late@example.com").returncode, 0)
        new = self.build("new.blume", "--kind", "split-block")
        self.assertEqual(json.loads(run("info", "--json", new, check=0).stdout)["hash"], "xxh3-64")
        self.assertFails(("merge", old, new, "--output", self.path("m.blume")), "hash functions differ (xxh3-128, xxh3-64)")
        self.assertFalse(os.path.exists(self.path("m.blume")))

    def test_a_version_1_file_is_rewritten_as_version_2_with_the_same_bits(self):
        path = self.path("bloom.blume")
        shutil.copy(os.path.join(FIXTURES, "bloom.blume"), path)
        run("add", path, "late@example.com", check=0)
        info = json.loads(run("info", "--json", path, check=0).stdout)
        self.assertEqual(info["format_version"], 2)
        self.assertEqual(info["inserted"], 1001)
        self.assertEqual(run("query", "-q", path, "fixture-key-7@example.com", "late@example.com").returncode, 0)


class PlannedGeometryFixtures(Tool):
    """Version-2 scalable and aging files from before they stored their layers' and buffers' geometry
    (tests/fixtures/v2-planned/make.sh): read by planning it as their writer did, they answer as then."""

    def test_files_without_stored_geometry_answer_and_describe_themselves_as_before(self):
        keys = [f"fixture-key-{i}@example.com" for i in range(1000)] + [f"absent-key-{i}@example.org" for i in range(1000)]
        stdin = ("\n".join(keys) + "\n").encode()
        for name in ("scalable", "aging"):
            path = os.path.join(PLANNED_FIXTURES, name + ".blume")
            out = run("query", path, stdin=stdin).stdout.decode().splitlines()
            codes = {"maybe": "m", "no": "n", "absent": "n", "yes": "y"}
            answers = "".join(codes.get(line.split("\t")[1], line.split("\t")[1] + ",") for line in out)
            with open(os.path.join(PLANNED_FIXTURES, name + ".answers")) as f:
                self.assertEqual(answers, f.read().strip(), name)
            with open(os.path.join(PLANNED_FIXTURES, name + ".info.json")) as f:
                before = json.load(f)
            now = json.loads(run("info", "--json", path, check=0).stdout)
            self.assertEqual(now["format_version"], 2, name)
            for field, value in before.items():
                if field == "size":  # memory held, which now includes the chain's layer table
                    self.assertGreaterEqual(now[field], value, name)
                else:
                    self.assertEqual(now[info_key(name, field)], value, (name, field))

    def test_a_rewritten_file_stores_its_geometry_and_keeps_its_answers(self):
        for name in ("scalable", "aging"):
            path = self.path(name + ".blume")
            shutil.copy(os.path.join(PLANNED_FIXTURES, name + ".blume"), path)
            run("add", path, "late@example.com", check=0)
            self.assertEqual(run("query", "-q", path, "fixture-key-999@example.com", "late@example.com").returncode, 0,
                             name)
            self.assertNotEqual(read(path), read(os.path.join(PLANNED_FIXTURES, name + ".blume")), name)


if __name__ == "__main__":
    unittest.main()


class TextIndex(Tool):
    """blume index: build from files or lines, query, verify, info, and refusals."""

    def write_docs(self):
        docs = self.path("docs")
        os.makedirs(os.path.join(docs, "sub"))
        texts = {
            "a.txt": "The Bloom filter answers membership queries.",
            "b.txt": "A cuckoo filter stores fingerprints; a Bloom-filter stores bits.",
            "sub/c.txt": "Redis keeps keys in memory.\nBF.ADD adds an item to a Bloom filter in Redis.\n",
        }
        for i in range(300):
            texts[f"sub/n{i:03}.txt"] = f"note {i} about topic{i % 17} and word{i % 5}"
        for name, text in texts.items():
            with open(os.path.join(docs, name), "w") as f:
                f.write(text)
        return docs, texts

    def test_every_document_holding_the_terms_is_a_candidate_and_verify_keeps_only_them(self):
        docs, texts = self.write_docs()
        index = self.path("docs.bidx")
        run("index", "build", "--docs", docs, "--output", index, check=0)
        for query in (["bloom", "filter"], ["topic3"], ["word2", "topic7"], ["REDIS", "keys"]):
            terms = [t.lower() for t in query]
            holding = sorted(os.path.join(docs, n) for n, t in texts.items()
                             if all(x in t.lower().replace("-", " ").replace(".", " ").split() for x in terms))
            candidates = run("index", "query", index, *query, check=0).stdout.decode().split()
            self.assertTrue(set(holding) <= set(candidates), query)
            verified = run("index", "query", "--verify", index, *query, check=0)
            self.assertEqual(sorted(verified.stdout.decode().split()), holding, query)
            self.assertIn(f"{len(candidates)} candidates, {len(holding)} matches", verified.stderr.decode())
        counts = run("index", "query", "--count", "--verify", index, "bloom", check=0).stdout.decode()
        self.assertEqual(counts, "candidates\t3\nmatches\t3\n")
        self.assertEqual(run("index", "query", index, "zebra", check=1).stdout, b"")
        j = json.loads(run("index", "query", "--json", index, "topic3", check=0).stdout)
        self.assertGreaterEqual(j["candidates"], 18)
        self.assertGreaterEqual(j["expected_false_candidates"], 0)
        info = json.loads(run("index", "info", "--json", index, check=0).stdout)
        self.assertEqual(info["documents"], 303)
        self.assertEqual(info["size"], os.path.getsize(index))
        self.assertIn("documents              303", run("index", "info", index, check=0).stdout.decode())

    def test_lines_are_documents(self):
        docs, _ = self.write_docs()
        index = self.path("lines.bidx")
        c = os.path.join(docs, "sub", "c.txt")
        run("index", "build", "--lines", "--docs", c, "--output", index, "--classic", check=0)
        out = run("index", "query", "--verify", index, "bf", "redis", check=0).stdout.decode()
        self.assertEqual(out, f"{c}:2\n")

    def test_refusals(self):
        docs, _ = self.write_docs()
        index = self.path("docs.bidx")
        self.assertFails(["index", "build", "--docs", self.path("missing"), "--output", index], "missing")
        self.assertFails(["index", "build", "--docs", docs, "--output", index, "--rank", "2"], "rank")
        self.assertFails(["index", "build", "--docs", docs, "--output", index, "--density", "0.9"], "density")
        self.assertFalse(os.path.exists(index))
        run("index", "build", "--docs", docs, "--output", index, check=0)
        self.assertFails(["index", "query", index, "--", "--- ..."], "no terms")
        damaged = bytearray(read(index))
        damaged[len(damaged) // 2] ^= 0x40
        with open(self.path("bad.bidx"), "wb") as f:
            f.write(damaged)
        self.assertFails(["index", "query", self.path("bad.bidx"), "bloom"], "checksum")
        self.assertFails(["index", "info", self.keys], "not a blume index")
        os.chmod(index, 0o444)
        if os.geteuid() != 0:
            self.assertFails(["index", "build", "--docs", docs, "--output", index], "--force")
