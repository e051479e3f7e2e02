# SPDX-License-Identifier: Apache-2.0
"""The features of a molecule or of a substructure query: its labelled paths of up to `max_bonds` bonds.

A molecule's features are every path of its heavy-atom graph, written as the elements along it and, in a
second family, the elements and the bond types together. A query (a SMARTS pattern, or a substructure cut
from a molecule) gives only the paths whose labels it pins down: an atom of one definite element, a bond of
one definite type. Whatever the query matches, each of those paths is mapped onto a path of the molecule with
the same labels, so a query's features are a subset of every molecule it is a substructure of: the screen
never drops a match.
"""

import re

from rdkit import Chem

# Bond queries that allow exactly one bond type of a sanitized molecule.
_DEFINITE_BONDS = {"-": "1", "=": "2", "#": "3", ":": "a"}
_BOND_LABELS = {
    Chem.BondType.SINGLE: "1",
    Chem.BondType.DOUBLE: "2",
    Chem.BondType.TRIPLE: "3",
    Chem.BondType.AROMATIC: "a",
}
_AROMATIC_SYMBOLS = {"c": 6, "n": 7, "o": 8, "s": 16, "p": 15, "b": 5, "se": 34, "as": 33, "te": 52}
# One-letter SMARTS primitives that are not elements (degree, valence, ring, connectivity, any atom...).
_NOT_ELEMENTS = {"H", "D", "R", "X", "A", "a", "v", "x", "r", "h", "*"}
_TABLE = Chem.GetPeriodicTable()


def _element_of_primitive(text):
    """The element a leading SMARTS primitive names (#6, C, Cl, c, se), or None."""
    m = re.match(r"#(\d+)", text)
    if m:
        return int(m.group(1))
    for length in (2, 1):
        symbol = text[:length]
        if len(symbol) < length or symbol in _NOT_ELEMENTS:
            continue
        if symbol in _AROMATIC_SYMBOLS:
            return _AROMATIC_SYMBOLS[symbol]
        if symbol[0].isupper() and (length == 1 or symbol[1].islower()):
            try:
                number = _TABLE.GetAtomicNumber(symbol)
            except RuntimeError:
                continue
            if number > 0:
                return number
    return None


def atom_label(atom):
    """The element an atom is certain to be in every match, as a string, or None.

    Hydrogen counts as unknown: a query's explicit hydrogens match no implicit hydrogen of a molecule.
    """
    if not atom.HasQuery():
        number = atom.GetAtomicNum()
        return str(number) if number > 1 else None
    smarts = atom.GetSmarts()
    body = smarts[1:-1] if smarts.startswith("[") else smarts
    # An OR or a recursive pattern can reach other elements: take only AND-ed parts.
    if "," in body or "$" in body:
        return None
    for part in re.split(r"[;&]", body):
        if part and not part.startswith("!"):
            number = _element_of_primitive(part)
            if number is not None:
                return str(number) if number > 1 else None
    return None


def bond_label(bond):
    if not bond.HasQuery():
        return _BOND_LABELS.get(bond.GetBondType())
    smarts = bond.GetSmarts()
    # "-&!@" is still a single bond: the first AND-ed part decides when it is one of the four.
    first = re.split(r"[;&]", smarts)[0] if smarts else ""
    if "," in smarts or first not in _DEFINITE_BONDS or first.startswith("!"):
        return None
    return _DEFINITE_BONDS[first]


def _path_atoms(ends, bonds):
    """The atoms along a path of bonds, in order (the first again at the end of a path that closes a ring)."""
    a, b = ends[bonds[0]]
    if len(bonds) == 1:
        return [a, b]
    atoms = [a if a not in ends[bonds[1]] else b]
    for index in bonds:
        x, y = ends[index]
        atoms.append(y if x == atoms[-1] else x)
    return atoms


def _canonical(labels, closed):
    """One spelling of a labelled path whatever its direction and, for a ring, wherever it starts.

    `labels` alternates atoms and bonds; a ring's ends are the same atom, so its last label is dropped and
    every rotation by whole atom-bond steps is a spelling of it.
    """
    if not closed:
        return min(",".join(labels), ",".join(reversed(labels)))
    steps = labels[:-1]
    spellings = []
    for sequence in (steps, steps[:1] + steps[1:][::-1]):
        for shift in range(0, len(sequence), 2):
            spellings.append(",".join(sequence[shift:] + sequence[:shift]))
    return "@" + min(spellings)


def features(mol, max_bonds=7):
    """The set of feature strings of a molecule or query."""
    atoms = [atom_label(a) for a in mol.GetAtoms()]
    bonds = [bond_label(b) for b in mol.GetBonds()]
    ends = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()]
    out = {"A" + label for label in atoms if label is not None}
    for length in range(1, max_bonds + 1):
        for path in Chem.FindAllPathsOfLengthN(mol, length, useBonds=True):
            along = _path_atoms(ends, path)
            elements = [atoms[i] for i in along]
            if None in elements:
                continue
            closed = along[0] == along[-1]
            # A path that meets itself anywhere but at its ends (a ring with a tail) has more than one order
            # of its bonds; leaving such paths out on both sides keeps one spelling per path.
            if len(set(along)) != len(along) - closed:
                continue
            # Elements alone (the bonds as "~"), then elements and bonds where every bond is definite.
            labels = [None] * (2 * len(elements) - 1)
            labels[0::2] = elements
            labels[1::2] = ["~"] * length
            out.add("E" + _canonical(labels, closed))
            types = [bonds[i] for i in path]
            if None in types:
                continue
            labels[1::2] = types
            out.add("B" + _canonical(labels, closed))
    return out
