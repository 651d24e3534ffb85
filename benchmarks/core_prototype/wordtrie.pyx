# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""Prototype of the compiled text core's hottest part: the term tries walked over word ids.

A text's words become integer ids in one C loop over its code points (text holding `İ` or
`Σ` is left to the pure-Python reader, as `words_of` treats it apart), and a trie of terms becomes flat integer
arrays: the root's children indexed by word id, every other node's children sorted by id.
The longest matches, none inside another, are what `etl.transform.terms._kept_matches`
finds with the word trie.
"""

from cython.operator cimport dereference as deref
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector


cdef inline bint word_char(unsigned char c) noexcept:
    return (c >= b'a' and c <= b'z') or (c >= b'A' and c <= b'Z') or (c >= b'0' and c <= b'9') or c == b'_'


cdef extern from "Python.h":
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch)
    Py_UCS4 Py_UNICODE_TOLOWER(Py_UCS4 ch)


cdef inline void utf8(Py_UCS4 point, string& out) noexcept:
    """A code point appended to `out` in UTF-8."""
    cdef unsigned int ch = point
    if ch < 0x80:
        out.push_back(<char>ch)
    elif ch < 0x800:
        out.push_back(<char>(0xC0 | (ch >> 6)))
        out.push_back(<char>(0x80 | (ch & 0x3F)))
    elif ch < 0x10000:
        out.push_back(<char>(0xE0 | (ch >> 12)))
        out.push_back(<char>(0x80 | ((ch >> 6) & 0x3F)))
        out.push_back(<char>(0x80 | (ch & 0x3F)))
    else:
        out.push_back(<char>(0xF0 | (ch >> 18)))
        out.push_back(<char>(0x80 | ((ch >> 12) & 0x3F)))
        out.push_back(<char>(0x80 | ((ch >> 6) & 0x3F)))
        out.push_back(<char>(0x80 | (ch & 0x3F)))


cdef class WordTrie:
    """A `Trie` (word -> (children, endings)) as integer arrays."""

    cdef unordered_map[string, int] vocabulary
    cdef vector[int] root          # word id -> node, or -1
    cdef vector[int] first         # node -> its first child in child_word / child_node
    cdef vector[int] count         # node -> its number of children
    cdef vector[int] child_word
    cdef vector[int] child_node
    cdef vector[int] ending        # node -> index into `endings`, or -1
    cdef public list endings       # the (key, term) lists that end at a node

    def __init__(self, dict trie):
        self.endings = []
        words = {}
        def collect(dict node):
            for word, (children, _) in node.items():
                words.setdefault(word, len(words))
                collect(children)
        collect(trie)
        for word, number in words.items():
            self.vocabulary[word.encode("utf-8")] = number
        self.root.assign(len(words), -1)
        # nodes in breadth-first order; node 0 is the root
        pending = [trie]
        self.first.push_back(0)
        self.count.push_back(0)
        self.ending.push_back(-1)
        cdef int node = 0
        while node < len(pending):
            children = sorted(pending[node].items(), key=lambda item: words[item[0]])
            self.first[node] = self.child_word.size()
            self.count[node] = len(children)
            for word, (grandchildren, ends) in children:
                child = len(pending)
                pending.append(grandchildren)
                self.first.push_back(0)
                self.count.push_back(0)
                if ends:
                    self.ending.push_back(len(self.endings))
                    self.endings.append(ends)
                else:
                    self.ending.push_back(-1)
                self.child_word.push_back(words[word])
                self.child_node.push_back(child)
                if node == 0:
                    self.root[words[word]] = child
            node += 1

    cdef int child(self, int node, int word) noexcept:
        """A node's child for a word id (binary search), or -1."""
        cdef int lo = self.first[node], hi = lo + self.count[node], mid
        while lo < hi:
            mid = (lo + hi) >> 1
            if self.child_word[mid] < word:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.first[node] + self.count[node] and self.child_word[lo] == word:
            return self.child_node[lo]
        return -1

    cdef bint read_ids(self, str text, vector[int]& found):
        """The ids of the text's lower-cased `\\w+` words into `found` (-1: in no term);
        False for text holding `İ` or `Σ`, whose lower-casing depends on more than the
        character (left to the Python reader, as `words_of` leaves them)."""
        if "\u0130" in text or "\u03a3" in text:
            return False
        cdef string word
        cdef Py_UCS4 ch
        cdef unsigned char code
        cdef bint inside = False
        cdef unordered_map[string, int].iterator entry
        for ch in text:
            # `\w` is what str.isalnum() accepts, and `_`
            if ch < 128:
                if not word_char(<unsigned char>ch):
                    if inside:
                        self.add(word, found)
                        inside = False
                    continue
                code = <unsigned char>ch
                if code >= 65 and code <= 90:
                    code = code + 32
                if not inside:
                    word.clear()
                    inside = True
                word.push_back(<char>code)
                continue
            if not (Py_UNICODE_ISALNUM(ch)):
                if inside:
                    self.add(word, found)
                    inside = False
                continue
            if not inside:
                word.clear()
                inside = True
            utf8(Py_UNICODE_TOLOWER(ch), word)
        if inside:
            self.add(word, found)
        return True

    cdef void add(self, string& word, vector[int]& found) noexcept:
        """A word's id (-1: in no term)."""
        cdef unordered_map[string, int].iterator entry = self.vocabulary.find(word)
        if entry == self.vocabulary.end():
            found.push_back(-1)
        else:
            found.push_back(deref(entry).second)

    def ids(self, str text):
        """The ids of the text's words (see `read_ids`), or None for text left to Python."""
        cdef vector[int] found
        return found if self.read_ids(text, found) else None

    def matches(self, str text):
        """{start word: (last word, endings)} of the longest matches, none inside another,
        in reading order; None for text left to Python."""
        cdef vector[int] ids
        if not self.read_ids(text, ids):
            return None
        cdef int n = ids.size(), start, end, node, last, best, longest_end = -1, word
        kept = {}
        for start in range(n):
            word = ids[start]
            if word < 0:
                continue
            node = self.root[word]
            if node < 0:
                continue
            best = self.ending[node]
            last = start
            end = start + 1
            while self.count[node] and end < n and ids[end] >= 0:
                node = self.child(node, ids[end])
                if node < 0:
                    break
                if self.ending[node] >= 0:
                    last = end
                    best = self.ending[node]
                end += 1
            if best >= 0 and last > longest_end:
                longest_end = last
                kept[start] = (last, self.endings[best])
        return kept
