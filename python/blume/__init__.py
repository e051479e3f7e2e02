# SPDX-License-Identifier: Apache-2.0
"""blume: Bloom filters and their whole family, from the blume C++ library.

A filter answers "is this key in the set?" in a fraction of the memory of a set: "no" is certain,
"maybe" is wrong at the false-positive rate it was planned for.

    >>> import blume
    >>> emails = blume.Filter("split-block", capacity=100_000_000, fpr=0.01)
    >>> emails.add("anna@example.com")
    True
    >>> "anna@example.com" in emails
    True
    >>> emails.contains_many(["anna@example.com", "bob@example.com"])   # NumPy bool array
    array([ True, False])

Keys are str (hashed as UTF-8), bytes-like or int (64-bit, as the C++ library hashes integers), so a
file written by ``blume build`` answers the same here. Every kind has its own class
(``blume.SplitBlockBloomFilter``, ``blume.CuckooFilter``, ...; ``blume.kinds()`` lists the names);
``blume.build`` makes the kinds built from all their keys at once. Filters are saved in blume's file
format (``save``, ``load``, ``open`` for a memory mapping) and pickle as the same bytes.
"""

from . import _blume
from ._blume import (
    Error,
    FileLocked,
    FilterFull,
    FormatError,
    IncompatibleFilters,
    InvalidArgument,
    IoError,
    KeyTypeError,
    UnsupportedOperation,
    Filter,
    __version__,
    build,
    class_of,
    from_bytes,
    kinds,
    load,
    open,
    plan,
)



def _unpickle(data):
    """A pickled filter back from its bytes (pickle refers to this function by name)."""
    return from_bytes(data)


# One class per kind, named in the extension (BloomFilter, SplitBlockBloomFilter, ...).
_classes = {name: class_of(name) for name in kinds()}
globals().update({cls.__name__: cls for cls in _classes.values()})
for _cls in (Filter, *_classes.values()):
    _cls.__module__ = __name__  # blume.SplitBlockBloomFilter, not blume._blume.SplitBlockBloomFilter

__all__ = [
    "Error", "FileLocked", "FilterFull", "FormatError", "IncompatibleFilters", "InvalidArgument", "IoError",
    "KeyTypeError", "UnsupportedOperation", "Filter", "build", "class_of", "from_bytes", "kinds", "load",
    "open", "plan", "__version__",
] + sorted(cls.__name__ for cls in _classes.values())
