# SPDX-License-Identifier: Apache-2.0
"""Chemical structure search with blume filters as molecular fingerprints, beside RDKit's PatternFingerprint.

    python3 examples/chemistry/screen.py [--molecules N] [--cut Q] [--bits M] [--hashes K ...] [--json FILE]

The database is the NCI set that rdkit-data ships (Data/NCI/first_5K.smi); the queries are the PAINS
substructure patterns (Data/Pains/wehi_pains.csv, their explicit hydrogens merged into their atoms as RDKit's
filter catalog does) and substructures cut from the molecules themselves. Every query meets every molecule
three ways: blume's subset screen, PatternFingerprint's, and RDKit's exact HasSubstructMatch, which is the
truth both screens are held to (a match a screen drops is a false negative, and there must be none).
Then the similarity of molecule pairs: the Tanimoto coefficient of the fingerprints, its collision-corrected
estimate, and the exact Jaccard index of the feature sets.
"""

import argparse
import csv
import json
import os
import random
import statistics
import sys
import time

import blume
from rdkit import Chem, DataStructs, RDLogger

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from features import features  # noqa: E402

RDLogger.DisableLog("rdApp.*")
DATA = os.environ.get("RDKIT_DATA", "/usr/share/RDKit/Data")


def load_molecules(limit):
    molecules = []
    with open(os.path.join(DATA, "NCI", "first_5K.smi")) as f:
        for line in f:
            mol = Chem.MolFromSmiles(line.split()[0]) if line.strip() else None
            if mol is not None:
                molecules.append(mol)
            if len(molecules) == limit:
                break
    return molecules


def load_pains():
    with open(os.path.join(DATA, "Pains", "wehi_pains.csv")) as f:
        patterns = [row[0] for row in csv.reader(f) if row]
    queries = [Chem.MolFromSmarts(p) for p in patterns]
    return [Chem.MergeQueryHs(q) for q in queries if q is not None]


def cut_substructures(molecules, count, rng):
    """`count` connected pieces of 3 to 10 bonds, each grown bond by bond from a random bond of a random
    molecule: queries that certainly match at least the molecule they were cut from."""
    cuts = []
    while len(cuts) < count:
        mol = rng.choice(molecules)
        if mol.GetNumBonds() < 3:
            continue
        size = rng.randint(3, min(10, mol.GetNumBonds()))
        chosen = [rng.randrange(mol.GetNumBonds())]
        while len(chosen) < size:
            frontier = sorted(
                {
                    n.GetIdx()
                    for b in chosen
                    for a in (mol.GetBondWithIdx(b).GetBeginAtom(), mol.GetBondWithIdx(b).GetEndAtom())
                    for n in a.GetBonds()
                }
                - set(chosen)
            )
            if not frontier:  # a small fragment of a salt or mixture: keep what it has
                break
            chosen.append(rng.choice(frontier))
        if len(chosen) >= 3:
            cuts.append(Chem.PathToSubmol(mol, chosen))
    return cuts


def fingerprint(feature_set, bits, hashes):
    f = blume.BloomFilter(bits=bits, hashes=hashes)
    f.add_many(sorted(feature_set))
    return f


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def screen_counts(query_prints, molecule_prints, passes):
    """For each query, the indices of the molecules that pass the screen."""
    return [[j for j, m in enumerate(molecule_prints) if passes(q, m)] for q in query_prints]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--molecules", type=int, default=0, help="the first N molecules of the set (0: all)")
    parser.add_argument("--cut", type=int, default=100, help="substructures cut from the molecules as queries")
    parser.add_argument("--bits", type=int, nargs="+", default=[512, 1024, 2048], help="fingerprint sizes")
    parser.add_argument("--hashes", type=int, nargs="+", default=[1, 2, 3, 4], help="bits per feature to try")
    parser.add_argument("--neighbours", type=int, default=100, help="query molecules of the similarity search")
    parser.add_argument("--json", help="write the measurements here as well")
    args = parser.parse_args()
    rng = random.Random(2007)

    molecules = load_molecules(args.molecules or -1)
    pains = load_pains()
    cuts = cut_substructures(molecules, args.cut, rng)
    query_sets = {"PAINS": pains, "cut": cuts}
    print(f"{len(molecules)} molecules (NCI first_5K.smi), {len(pains)} PAINS patterns, {len(cuts)} cut substructures")

    molecule_features, t_features = timed(lambda: [features(m) for m in molecules])
    query_features = {name: [features(q) for q in qs] for name, qs in query_sets.items()}
    sizes = [len(s) for s in molecule_features]
    print(
        f"features (labelled paths of up to 7 bonds): median {statistics.median(sizes):.0f}, max {max(sizes)} per "
        f"molecule, {t_features:.1f} s"
    )

    # The truth: RDKit's exact matcher over every pair, timed.
    truth = {}
    t_exact = 0.0
    for name, qs in query_sets.items():
        matches, t = timed(lambda qs=qs: [[j for j, m in enumerate(molecules) if m.HasSubstructMatch(q)] for q in qs])
        truth[name] = matches
        t_exact += t
    pairs = {name: len(qs) * len(molecules) for name, qs in query_sets.items()}
    results = {"molecules": len(molecules), "queries": {n: len(q) for n, q in query_sets.items()}, "screens": []}

    def report(label, bits, hashes, survivors, t_screen):
        row = {"screen": label, "bits": bits, "hashes": hashes, "screen_seconds": t_screen}
        for name in query_sets:
            passed = sum(len(s) for s in survivors[name])
            exact = sum(len(s) for s in truth[name])
            missed = sum(len(set(t) - set(s)) for t, s in zip(truth[name], survivors[name]))
            row[name] = {
                "exact": exact,
                "survivors": passed,
                "false_negatives": missed,
                "screened_out": 1 - passed / pairs[name],
            }
        results["screens"].append(row)
        return row

    blume_rows, blume_survivors = [], {}
    for bits in args.bits:
        for hashes in args.hashes:
            prints = [fingerprint(s, bits, hashes) for s in molecule_features]
            survivors, t_screen = {}, 0.0
            for name in query_sets:
                qprints = [fingerprint(s, bits, hashes) for s in query_features[name]]
                survivors[name], t = timed(lambda q=qprints: screen_counts(q, prints, lambda a, b: a.is_subset_of(b)))
                t_screen += t
            blume_rows.append(report("blume", bits, hashes, survivors, t_screen))
            blume_survivors[bits, hashes] = survivors
    pattern_rows = []
    for bits in args.bits:
        prints = [Chem.PatternFingerprint(m, fpSize=bits) for m in molecules]
        survivors, t_screen = {}, 0.0
        for name, qs in query_sets.items():
            qprints = [Chem.PatternFingerprint(q, fpSize=bits) for q in qs]
            survivors[name], t = timed(lambda q=qprints: screen_counts(q, prints, DataStructs.AllProbeBitsMatch))
            t_screen += t
        pattern_rows.append(report("PatternFingerprint", bits, None, survivors, t_screen))

    total_pairs = sum(pairs.values())
    print()
    print("| screen | bits | k | PAINS survivors | cut survivors | screened out | false negatives | screen µs/pair |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in blume_rows + pattern_rows:
        passed = sum(row[n]["survivors"] for n in query_sets)
        missed = sum(row[n]["false_negatives"] for n in query_sets)
        print(
            f"| {row['screen']} | {row['bits']} | {row['hashes'] or '-'} | {row['PAINS']['survivors']} | "
            f"{row['cut']['survivors']} | {100 * (1 - passed / total_pairs):.3f}% | {missed} | "
            f"{1e6 * row['screen_seconds'] / total_pairs:.2f} |"
        )
    exact_total = {n: sum(len(s) for s in truth[n]) for n in query_sets}
    print(f"| exact (HasSubstructMatch) | | | {exact_total['PAINS']} | {exact_total['cut']} | | 0 | "
          f"{1e6 * t_exact / total_pairs:.2f} |")

    # The search itself at 2048 bits (or the largest size run): screen every pair, confirm the survivors.
    bits = max(args.bits)
    best = min((r for r in blume_rows if r["bits"] == bits), key=lambda r: sum(r[n]["survivors"] for n in query_sets))
    survivors_total = sum(best[n]["survivors"] for n in query_sets)
    survivors = blume_survivors[bits, best["hashes"]]
    # The survivors are the pairs most like a match, the slowest to refute: timed, not extrapolated.
    _, confirm = timed(
        lambda: [
            molecules[j].HasSubstructMatch(q)
            for name, qs in query_sets.items()
            for q, passed in zip(qs, survivors[name])
            for j in passed
        ]
    )
    print(
        f"\nsearch at {bits} bits, k = {best['hashes']}: screen {best['screen_seconds']:.2f} s + confirm "
        f"{survivors_total} survivors {confirm:.2f} s against {t_exact:.2f} s matching every pair exactly: "
        f"{t_exact / (best['screen_seconds'] + confirm):.1f}× faster"
    )
    results["search"] = {"bits": bits, "hashes": best["hashes"], "exact_seconds": t_exact,
                         "screen_seconds": best["screen_seconds"], "confirm_seconds": confirm}

    # Similarity: query molecules against every molecule, three ways.
    k = best["hashes"]
    prints = [fingerprint(s, bits, k) for s in molecule_features]
    picks = rng.sample(range(len(molecules)), min(args.neighbours, len(molecules)))
    errors_t, errors_c, overlap_t, overlap_c = [], [], [], []
    top = 10
    for i in picks:
        exact, tan, cor = [], [], []
        for j in range(len(molecules)):
            if j == i:
                continue
            a, b = molecule_features[i], molecule_features[j]
            exact.append((len(a & b) / len(a | b) if a or b else 1.0, j))
            tan.append((prints[i].tanimoto(prints[j]), j))
            cor.append((prints[i].estimate_jaccard(prints[j]), j))
        for (e, _), (t, _), (c, _) in zip(exact, tan, cor):
            errors_t.append(abs(t - e))
            errors_c.append(abs(c - e))
        nearest = {j for _, j in sorted(exact, key=lambda x: (-x[0], x[1]))[:top]}
        overlap_t.append(len(nearest & {j for _, j in sorted(tan, key=lambda x: (-x[0], x[1]))[:top]}) / top)
        overlap_c.append(len(nearest & {j for _, j in sorted(cor, key=lambda x: (-x[0], x[1]))[:top]}) / top)
    print(f"\nsimilarity of {len(picks)} molecules to all others at {bits} bits, k = {k} (truth: Jaccard of the feature sets)")
    print("| measure | mean absolute error | 10 nearest shared with the truth's |")
    print("|---|---:|---:|")
    print(f"| Tanimoto of the fingerprints | {statistics.mean(errors_t):.4f} | {100 * statistics.mean(overlap_t):.1f}% |")
    print(f"| corrected (estimate_jaccard) | {statistics.mean(errors_c):.4f} | {100 * statistics.mean(overlap_c):.1f}% |")
    results["similarity"] = {
        "bits": bits, "hashes": k, "queries": len(picks),
        "tanimoto_mae": statistics.mean(errors_t), "corrected_mae": statistics.mean(errors_c),
        "tanimoto_top10": statistics.mean(overlap_t), "corrected_top10": statistics.mean(overlap_c),
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    missed = sum(r[n]["false_negatives"] for r in blume_rows for n in query_sets)
    if missed:
        print(f"FAILED: blume's screen dropped {missed} exact matches", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
