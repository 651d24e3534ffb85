"""Named artifacts (methods, models, benchmarks, datasets ...) a paper introduces or mentions.

The text is read once as a list of tokens, each given a shape: a *strong* name (CommVQ, GSM8K,
LLaMA-3.1, scVI: capitals inside, or letters mixed with digits), a *title* word (Adam, Diffusion),
a number, a lowercase word or punctuation. Then:

- introduced: a cue (`we propose`, `this paper introduces`, `our proposed`, `X introduces`,
  `called`/`named`/`namely`, `X, a novel ...`, `our X`, an emphasised strong name) followed by
  a name; `Long Form (SF)` gives the short form as the name and the long form as an alias;
- mentioned: runs of strong and title words (`Grounding DINO`, `SWE-bench Lite`, `LLaMA-3.1 8B`),
  a run of title words that is not a generic class (`Direct Preference Optimization`), a single
  title word only where the context says it is a name (`like Adam`, `such as scVI or Harmony`),
  and acronyms defined in the text that name a technique rather than a field, task or class
  (`Rotary Position Embedding (RoPE)` yes; `reinforcement learning (RL)`, `LLMs` no);
- never: sentence-initial capitals, generic acronyms of a field, metrics, units, numbers,
  hardware, citations, URL pieces, and the paper's own names again as mentions.
"""

from __future__ import annotations

import re
import string
import unicodedata
from bisect import bisect_left
from functools import lru_cache, reduce
from itertools import accumulate, compress
from operator import iadd, sub
from typing import Any

from etl.models import Acronym, MethodMention
from etl.transform.acronyms import Definition, acronym_definitions, singular_word
from etl.transform.clean import anchored_finditer, sub_matches

# Words with internal hyphens, dots, pluses, apostrophes and @ stay one token (LLaMA-3.1, TD3+BC);
# a possessive `'s` is left out (`LLM's` is `LLM`); `CNN/DailyMail` is one name.
# (Possessive quantifiers: nothing after them can fail, so they only save backtracking state.)
TOKEN_RE = re.compile(r"[^\W_]++(?:(?:[-.+@/]|['’](?![sS]\b))[^\W_]++)*+\+*+|\S")
# A token and the white space before it (`\s` is what str.lstrip strips).
SPACED_TOKEN_RE = re.compile(r"\s*+(?:" + TOKEN_RE.pattern + ")")
# URLs (with a scheme, `www.`, or a bare code-host or `.com/`-style address) are not names.
URL_MASK_RE = re.compile(
    r"(?i)(?:\b(?:https?://|www\.)|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|io|net|co|ai|edu|dev)/)"
    r"[^\s<>\"'`{}|\\^\[\]]*"
)
# What every URL_MASK_RE match holds ('://' or '.com/'-style, so a slash; or 'www.').
URL_MASK_ANCHORS = ("/", "www.")

STRONG, TITLE, NUM, LOWER, PUNCT, ADJ = range(6)
NAME_SHAPES = frozenset({STRONG, TITLE, ADJ})  # where a mention may start
SENTENCE_ENDS = frozenset({".", "?", "!", ":", "\x00"})
BOUNDARIES = SENTENCE_ENDS | {")"}
HEADING_ENDS = frozenset({".", "?", "!"})
OPENERS = frozenset({"(", "“", '"', "'", "‘", "["})

# Field-wide acronyms, classes, metrics, units, hardware, platforms: shaped like names, never
# a named artifact. Compared in lower case, plural `s` removed.
GENERIC = frozenset(
    """
    ai agi ml dl rl marl irl il nlp nlu nlg cv asr tts mt nmt ner ir qa vqa ocr kg kgs
    llm vlm mllm lvlm lmm lm plm slm gnn cnn rnn dnn mlp gan vae nn snn ann ebm moe kv
    sota icl cot rag peft sft rlhf rlaif dp fl pfl cl ssl tta ttt da dg uda ood iid ovd
    gpu cpu tpu npu fpga asic api sdk os iot hpc sql nosql io ui gui cli url http https
    html json xml csv pdf latex github gitlab bitbucket huggingface arxiv openreview
    colab youtube zenodo figshare kaggle wikipedia google meta openai nvidia microsoft
    neurips nips icml iclr cvpr iccv eccv acl emnlp naacl coling aaai ijcai kdd sigir icra
    iros corl colt aistats uai miccai interspeech icassp wacv bmvc tmlr jmlr arxiv
    deepmind anthropic apple ibm intel amd baidu alibaba tencent huawei facebook twitter
    id ids kl mse mae rmse mape nll ce pde ode sde mdp pomdp ntk pac vc np rkhs svd pca
    2d 3d 4d ar vr xr rgb rgb-d lidar mri ct fmri eeg ecg emg pet dna rna mrna scrna-seq
    hvg gwas snp covid covid-19 sars-cov-2 us usa uk eu un phd ceo ii iii iv vi vii viii
    ix xi xii top-1 top-5 e.g i.e et al vs etc cf w.r.t so sota-level
    ap map auc auroc auprc roc fid kid is psnr ssim lpips bleu rouge meteor cider chrf
    chrf++ ter wer cer ndcg mrr hit hits iou miou dice ece fps flop flops tflop tflops mac
    macs gflop gflops gb mb kb tb pb ms db hz khz mhz ghz fp fp8 fp16 fp32 fp64 bf16 tf32
    int4 int8 int16 uint8 nf4 rtx gtx tpuv4 tpuv5 cuda f1 f1-score rouge-1 rouge-2 rouge-l
    rouge-lsum nds mota motp hota ade fde pq spl sr mos cmos mse-loss
    """.split()
)
# Metrics that take a suffix: `BLEU-4`, `ROUGE-L`, `F1-score`, `Top-5`.
METRIC_ROOTS = frozenset(
    "bleu rouge meteor chrf f1 top pass hits ndcg map mrr recall precision acc auc iou".split()
)
# Capitalised words that are adjectives or families, not artifacts.
GENERIC_TITLES = frozenset(
    """
    bayesian gaussian markov markovian euclidean hamiltonian laplacian lagrangian lagrange
    boolean riemannian hessian jacobian lipschitz pareto nash fourier bernoulli poisson
    dirichlet bellman newton newtonian monte carlo transformer transformers english chinese
    internet web ai january february march april may june july august september october
    november december monday tuesday wednesday thursday friday saturday sunday
    french german spanish japanese korean arabic russian italian portuguese hindi european
    american african asian indian section figure fig table appendix theorem lemma corollary
    proposition definition equation eq chapter step phase stage part version level type class
    case algorithm assumption remark example
    """.split()
)
HARDWARE_NOUNS = frozenset(
    "gpu gpus tpu tpus cpu cpus arm arms robot robots chip chips card cards processor "
    "processors device devices phone phones camera cameras sensor sensors board boards "
    "quadruped quadrupeds humanoid humanoids drone drones gripper grippers manipulator "
    "manipulators hand hands vehicle vehicles headset headsets".split()
)
HARDWARE_RE = re.compile(r"^(?:[AHVLB]\d{2,4}[A-Za-z]?|RTX|GTX|TPUv\d|M[1-4])$")
NUMBER_FORMAT_RE = re.compile(r"^(?:FP|BF|INT|UINT|TF|NF)\d+$", re.I)
UNIT_RE = re.compile(
    r"^(?:\d[\d.,]*(?:[x×]\d[\d.,]*)?(?:[KMBTkmbt]|x|×|st|nd|rd|th|D|d|px|ms|s|h|GB|MB|TB)?"
    r"|[vV]\d+(?:\.\d+)*)$"
)
SIZE_SUFFIX_RE = re.compile(r"[-\s]\d+(?:\.\d+)?(?:x\d+)?[BM](?:$|-)")
# Model families show in their names: -Net, -former, BERT, GPT, LLaMA, T5, ViT, -LM, -Instruct.
MODEL_SHAPE_RE = re.compile(
    r"(?:net|former|bert|gpt|llama|t5|vit|lm|instruct|chat|coder)(?:[-\d.]|$)"
)
SIZE_RE = re.compile(r"^\d+(?:\.\d+)?(?:x\d+)?[KMBT]$")
ROMAN_RE = re.compile(r"^[IVXivx]+$")
MATH_TOKEN_RE = re.compile(r"^[a-z][A-Z]\d*$")
DIGIT_LETTER_RE = re.compile(r"\d")
JOINER_SPLIT_RE = re.compile(r"[-+]")
ASCII_LETTERS = frozenset(string.ascii_letters)  # c.isascii() and c.isalpha()

KIND_WORDS = {
    "benchmark": "benchmark",
    "suite": "benchmark",
    "leaderboard": "benchmark",
    "environment": "benchmark",
    "testbed": "benchmark",
    "dataset": "dataset",
    "corpus": "dataset",
    "corpora": "dataset",
    "collection": "dataset",
    "split": "dataset",
    "atlas": "dataset",
    "loss": "loss",
    "objective": "loss",
    "optimizer": "optimizer",
    "optimiser": "optimizer",
    "metric": "metric",
    "measure": "metric",
    "distance": "metric",
    "score": "metric",
    "model": "model",
    "llm": "model",
    "encoder": "model",
    "decoder": "model",
    "agent": "model",
    "estimator": "model",
    "detector": "model",
    "classifier": "model",
    "recommender": "model",
    "transformer": "architecture",
    "architecture": "architecture",
    "network": "architecture",
    "backbone": "architecture",
    "framework": "framework",
    "paradigm": "framework",
    "pipeline": "framework",
    "toolkit": "library",
    "library": "library",
    "package": "library",
    "system": "system",
    "engine": "system",
    "platform": "system",
    "algorithm": "algorithm",
    "solver": "algorithm",
    "procedure": "algorithm",
    "method": "method",
    "approach": "method",
    "technique": "method",
    "strategy": "method",
    "scheme": "method",
    "attack": "method",
    "defence": "method",
    "defense": "method",
    "mechanism": "method",
    "curriculum": "method",
    "sampler": "method",
    "policy": "method",
    "module": "module",
    "block": "module",
    "layer": "module",
    "component": "module",
    "bank": "module",
    "head": "module",
    "kernel": "method",
    "prior": "method",
    "recipe": "method",
    "protocol": "method",
    "tool": "library",
    "test": "dataset",
    "database": "dataset",
    "simulator": "library",
    "checkpoint": "model",
}


def _kinds_by_word() -> dict[str, str]:
    """The kind of every lower-case word whose `singular_word` is a kind noun (`datasets`,
    `strategies`): one lookup in place of a call and a lookup per word.

    `singular_word` keeps a lower-case word or drops its `s`, `es` or `ies` (adding `y`), so a
    noun's only candidates are these four; each is kept if `singular_word` says so.
    """
    kinds: dict[str, str] = {}
    for noun in KIND_WORDS:
        for form in (noun, noun + "s", noun + "es", noun[:-1] + "ies"):
            kind = KIND_WORDS.get(singular_word(form))
            if kind:
                kinds[form] = kind
    return kinds


# KIND_WORDS.get(singular_word(word)) for a lower-case word: KIND_OF_WORD.get(word).
KIND_OF_WORD = _kinds_by_word()
# Nouns after which `, X and Y` lists the named instances (`two algorithms, PDI-CP and JDI-CP`).
LIST_NOUNS = frozenset(KIND_WORDS) | {w + "s" for w in KIND_WORDS} | {"approaches", "strategies"}
# Plural nouns after an acronym that make it a class: `pointwise information (PI) measures`.
CLASS_NOUNS = frozenset(w + "s" for w in KIND_WORDS) | frozenset(
    "approaches strategies families features representations embeddings variants tasks "
    "measurements values estimates signals labels annotations scores".split()
)
# Lowercase nouns that belong to a name: `Thompson sampling`, `Mahalanobis distance`.
NAME_NOUNS = frozenset(
    {"sampling", "distance", "divergence", "decomposition", "transform", "dropout"}
)

INTRO_VERBS = frozenset(
    """
    propose proposes proposed introduce introduces introduced present presents presented
    develop develops developed design designs designed build builds construct constructs
    constructed release releases released curate curates curated create creates created
    contribute contributes contributed devise devises devised assemble assembles assembled
    provide provides provided offer offers offered formulate formulates unveil unveils
    establish establishes
    """.split()
)
SUBJECT_NOUNS = frozenset({"paper", "work", "study", "article", "letter", "report", "note"})
SUBJECT_DETERMINERS = frozenset({"this", "our", "the", "present"})
ADVERBS = frozenset(
    "also further then first additionally newly hence thus therefore finally here subsequently "
    "next instead now second third moreover furthermore".split()
)
NAMING_WORDS = frozenset({"called", "named", "dubbed", "termed", "coined", "namely", "denoted"})
TRIGGERS = INTRO_VERBS | NAMING_WORDS | {"put", "our"}
TRIGGERS_AND_COMMA = TRIGGERS | {","}
# Words that end the object of an intro verb: the name, if any, came before them.
OBJECT_STOPS = frozenset(
    """
    to with for on in into from by over via using under against that which who where whose
    when while than as at through across between among without within based upon after
    before because since if is are was were be been being can could may might will would
    should must does do did has have had
    """.split()
)
OF_NOUNS = frozenset({"paradigm", "family", "class", "suite", "set", "collection", "series"})
NEW_WORDS = frozenset({"new", "novel", "newly", "first"})
ARTICLES = frozenset({"a", "an", "the"})
# `X, a corpus that we generate`: verbs by which the paper makes what it names.
RELATIVE_VERBS = INTRO_VERBS | frozenset(
    "build collect collected generate generated gather gathered compile compiled call".split()
)
# Context words after which a single capitalised word is a name: `like Adam`, `over Tutel`.
CUE_BEFORE = frozenset(
    """
    like including over than versus vs against outperforming outperforms outperform
    surpassing surpasses beats beating
    """.split()
)
CUE_PAIRS = frozenset({("such", "as"), ("compared", "with"), ("compared", "to"), ("e.g", ",")})
COORDINATORS = frozenset({",", "and", "or", "/"})
LIST_GLUE = COORDINATORS | {"such", "as", "like", "including", "e.g", "the", "(", "both", "either"}
ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "al", "vs", "etc", "cf", "w.r.t", "fig", "eq", "resp", "approx"}
)
INITIAL_STOPWORDS = frozenset(
    """
    the this these those our its their a an in on for with from by to as at using unlike
    like both all each compared given based while when although however recently moreover
    furthermore finally specifically notably here then we it they such many most some
    existing prior previous current modern standard popular evaluating built plugged
    """.split()
)
# Suffixes that turn a name into an adjective: `RoPE-commutative`, `BadNets-style`.
ADJ_SUFFIX_WORDS = frozenset(
    """
    based style like type guided driven aware free specific agnostic centric related inspired
    level wise only scale aligned compatible enabled friendly conditioned augmented powered
    generated enhanced initialized pretrained tuned labeled labelled supervised commutative
    equivariant invariant dependent independent efficient optimal consistent preserving
    native ready sized size shot step order hard complete side grained oriented induced
    """.split()
)
ADJ_ENDINGS = ("ed", "ive", "ant", "ent", "able", "ible", "ous", "ic", "al")

# Heads of acronym expansions that name a field, task, class or quantity, not an artifact.
GENERIC_HEADS = frozenset(
    """
    learning training detection recognition translation tomography imaging sequencing
    engineering service problem rate graph network field image intelligence processing art
    value language vision system task understanding generation retrieval analysis
    representation data science modeling modelling prediction forecasting answering
    segmentation synthesis estimation resonance verification scanning spectroscopy
    microscopy effect probability risk view perception
    """.split()
)
# Quantities: named only when the text keeps using them (`PVI outperforms PMI`), not in passing.
MEASURE_HEADS = frozenset(
    "information distance divergence entropy error score index ratio metric measure accuracy "
    "precision recall gain".split()
)
LOWERCASE_GENERIC_HEADS = frozenset({"optimization", "optimisation", "regression", "control"})
FUNCTION_WORDS = frozenset(
    {"of", "for", "with", "and", "in", "on", "to", "the", "from", "by", "via"}
)


KEY_IGNORED_RE = re.compile(r"[\s\-_./’']+")  # what method keys leave out


@lru_cache(maxsize=4096)
def method_key(name: str) -> str:
    """Key under which spellings of one artifact merge: case, hyphens, spaces and plurals."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = KEY_IGNORED_RE.sub("", text)
    return text[:-1] if len(text) > 3 and text.endswith("s") and not text.endswith("ss") else text


@lru_cache(maxsize=4096)
def generic_key(token: str) -> str:
    """A token compared with the generic lists: lower case, possessive and plural `s` removed."""
    if token.endswith(("'s", "’s")):
        token = token[:-2]
    if len(token) > 2 and token[-1] == "s" and (token[-2].isupper() or token[-2].isdigit()):
        token = token[:-1]  # LLMs, GNNs (but not DAS)
    return token.lower()


@lru_cache(maxsize=4096)
def shape(token: str) -> int:
    """What a token looks like: a strong name, a title word, a number, a lowercase word ..."""
    if not token[0].isalnum():
        return PUNCT
    if "@" in token or token.split("-", 1)[0].lower() in METRIC_ROOTS:
        return LOWER  # NDCG@10, BLEU-4, ROUGE-L
    if "/" in token:
        parts = token.split("/")
        if all(len(p) < 2 or p.islower() or generic_key(p) in GENERIC for p in parts):
            return LOWER  # A/B, input/output, LLMs/VLMs
    if UNIT_RE.match(token):
        return NUM
    low = generic_key(token)
    parts = token.split("-")
    if len(parts) > 1 and parts[-1].islower() and parts[-1].isalpha():
        last = parts[-1]
        if last in ADJ_SUFFIX_WORDS or (last.endswith(ADJ_ENDINGS) and len(last) > 4):
            return ADJ
    if low in GENERIC or HARDWARE_RE.match(token) or NUMBER_FORMAT_RE.match(token):
        return LOWER
    if ROMAN_RE.match(token) and token.isupper():
        return LOWER
    if MATH_TOKEN_RE.match(token) or (len(token) == 1 and not token.isdigit()):
        return LOWER
    if is_strong(token):
        if (
            len(parts) == 2
            and parts[0][:1].isupper()
            and parts[0][1:].islower()
            and (parts[1].endswith("s") and generic_key(parts[1]) in GENERIC)
        ):
            return LOWER  # Video-LLMs: a plain word qualifying a generic class, in the plural
        return STRONG
    if token[0].isupper():
        return LOWER if low in GENERIC_TITLES else TITLE
    return LOWER


_SHAPE_CACHE: dict[str, int] = {}


def _shapes(words: list[str]) -> list[int]:
    """Shapes of many tokens, remembered across texts (a vocabulary repeats)."""
    shapes = list(map(_SHAPE_CACHE.get, words))
    if None in shapes:
        index = shapes.index(None)
        while True:  # only the new words are looked at
            shapes[index] = _shape_of(words[index])
            try:
                index = shapes.index(None, index + 1)
            except ValueError:
                break
    return shapes  # type: ignore[return-value]


def _shape_of(word: str) -> int:
    """The shape of one token, remembered across texts (a vocabulary repeats)."""
    kind = _SHAPE_CACHE.get(word)
    if kind is None:
        if len(_SHAPE_CACHE) > 100_000:  # memory stays flat on huge, varied inputs
            _SHAPE_CACHE.clear()
        kind = _SHAPE_CACHE[word] = shape(word)
    return kind


def is_strong(token: str) -> bool:
    """Shaped like a coined name: inner capitals (DropEdge, scVI), or letters with digits."""
    parts = [p for p in JOINER_SPLIT_RE.split(token) if p]
    capitalised = 0
    single_letter = False
    for part in parts:
        uppers = sum(map(str.isupper, part))
        if uppers >= 2 or (uppers and not part[0].isupper()):
            return True
        if uppers:
            capitalised += 1
            single_letter = single_letter or len(part) == 1
        letters = sum(map(ASCII_LETTERS.__contains__, part))  # not 2α
        mixed = letters and DIGIT_LETTER_RE.search(part) and not UNIT_RE.match(part)
        if mixed and (uppers or letters >= 3 or len(parts) > 1):
            return True
    if capitalised >= 2 and single_letter:
        return True  # Best-of-N, Q-Iteration
    # Llama-2, Whisper-large-v3
    return len(parts) > 1 and parts[0][:1].isupper() and any(UNIT_RE.match(p) for p in parts[1:])


def _mask_urls(text: str) -> str:
    """The text with each URL_MASK_RE match blanked (`\\x00` then spaces, lengths kept)."""
    matches = anchored_finditer(URL_MASK_RE, text, URL_MASK_ANCHORS)
    return sub_matches(text, matches, lambda m: "\x00" + " " * (len(m.group(0)) - 1))


# The first space of a run of spaces: a text is cut there into pieces, the rest of the run
# starting the next piece (as white space before its first token).
PIECE_SPLIT_RE = re.compile(r"(?<! ) ")
# Per token in a piece's tuple: the token, its lower case, shape, advance, length, and whether
# it may cue an introduced name, start a mention, or end a sentence (see `_Text`).
TOKEN_FIELDS = 8
WORD, LOWER_CASE, SHAPE, ADVANCE, LENGTH, CUE, NAME_SHAPED, BOUNDARY = range(TOKEN_FIELDS)
Piece = tuple[str | int, ...]


class _PieceTokens(dict[str, Piece]):
    """A piece of text between spaces -> for each of its tokens, in one flat tuple: the token,
    its lower case, its shape, its advance: how far it reaches past the previous token (its
    length with the white space before it; the first token counts the space before the piece),
    its length, and the three flags of `_flags`.

    Filled as pieces are first seen, remembered across texts (a vocabulary repeats).
    """

    def __missing__(self, piece: str) -> Piece:
        # Memory stays flat on huge, varied inputs: at some 400 bytes a piece this is about
        # 2 MB per worker, and the pieces a text is mostly made of come back at once. A larger
        # cache was slower on a one-pass load (more memory touched) and cost workers 10 MB.
        if len(self) > 5_000:
            self.clear()
        # A piece holds one to three tokens: a loop over them is cheaper than the list-wide
        # map() calls of `_tokenize` (each made for so few items), and a piece is tokenized
        # again each time the cache has been cleared (some five pieces a text).
        fields: list[str | int] = []
        for spaced in _spaced_tokens(piece):
            word = spaced.lstrip()
            low = word.lower()
            kind = _shape_of(word)
            fields += (word, low, kind, len(spaced), len(word))
            fields += (low in TRIGGERS_AND_COMMA, kind in NAME_SHAPES, word in BOUNDARIES)
        tokens = self[piece] = tuple(fields)
        return tokens


_PIECE_TOKENS = _PieceTokens()


def _spaced_tokens(piece: str) -> list[str]:
    """`SPACED_TOKEN_RE.findall(" " + piece)`. A piece of letters and digits only is one
    token: str.isalnum is `[^\\W_]` (what `\\w` matches but `_`), so TOKEN_RE's first run takes
    all of it and nothing follows. Some two in five new pieces are such words."""
    spaced = " " + piece
    return [spaced] if piece.isalnum() else SPACED_TOKEN_RE.findall(spaced)


def _flags(
    words: list[str], lower: list[str], shapes: list[int]
) -> tuple[list[bool], list[bool], list[bool]]:
    """Per token: whether it may cue an introduced name (a trigger word or a comma), start a
    mention (its shape), or end a sentence."""
    return (
        list(map(TRIGGERS_AND_COMMA.__contains__, lower)),
        list(map(NAME_SHAPES.__contains__, shapes)),
        list(map(BOUNDARIES.__contains__, words)),
    )


class _Text:
    """A text's tokens with their shapes, positions and sentence starts."""

    words: list[str]
    lower: list[str]
    shapes: list[int]
    starts: list[int]
    ends: list[int]
    # per token: a trigger word or comma, a shape that may start a mention, a sentence end
    cues: list[bool]
    name_shaped: list[bool]
    boundaries: list[bool]

    def __init__(self, text: str):
        masked = _mask_urls(text) if "/" in text else text
        self.text = text
        if not self._tokenize_pieces(masked):
            self._tokenize(masked)
        self.n = len(self.words)
        self.initial = self._sentence_starts()
        self.heading_end = self._heading_end()

    def _tokenize(self, masked: str) -> None:
        """Words, where they start and end, their lower case, shapes and flags (`_flags`), from
        one pass of the tokenizer over the whole text."""
        # Each token with the white space before it: the words are those stripped, and where
        # they end adds up (no Match objects to make and read).
        spaced: list[str] = SPACED_TOKEN_RE.findall(masked)
        self.words = words = list(map(str.lstrip, spaced))
        self.ends = list(accumulate(map(len, spaced)))
        self.starts = list(map(sub, self.ends, map(len, words)))
        self.lower = lower = list(map(str.lower, words))
        self.shapes = shapes = _shapes(words)
        self.cues, self.name_shaped, self.boundaries = _flags(words, lower, shapes)

    def _tokenize_pieces(self, masked: str) -> bool:
        """What `_tokenize` finds, read from the text's pieces between spaces, each tokenized
        once (see `_PieceTokens`): a text is mostly pieces seen before. False, with nothing
        set, when a piece before the text's trailing white space holds no token or ends in
        white space: its length would be lost.

        No token holds a space, and the tokenizer looks at nothing past one, so the text's
        tokens are its pieces' tokens in order. What no token covers is white space; when it
        is all at the end, the tokens' advances add up to the length of the stripped text.
        """
        pieces = masked.split(" ") if "  " not in masked else PIECE_SPLIT_RE.split(masked)
        # the pieces' tuples added to one list (`+=` copies a tuple at once; chain() goes item
        # by item)
        fields: list[Any] = reduce(iadd, map(_PIECE_TOKENS.__getitem__, pieces), [])
        # the first piece has no space before it: where tokens end starts from -1
        ends = list(accumulate(fields[ADVANCE::TOKEN_FIELDS], initial=-1))
        if ends[-1] != len(masked.rstrip()):
            return False
        del ends[0]
        self.ends = ends
        self.starts = list(map(sub, ends, fields[LENGTH::TOKEN_FIELDS]))
        self.words = fields[WORD::TOKEN_FIELDS]
        self.lower = fields[LOWER_CASE::TOKEN_FIELDS]
        self.shapes = fields[SHAPE::TOKEN_FIELDS]
        self.cues = fields[CUE::TOKEN_FIELDS]
        self.name_shaped = fields[NAME_SHAPED::TOKEN_FIELDS]
        self.boundaries = fields[BOUNDARY::TOKEN_FIELDS]
        return True

    def _heading_end(self) -> int:
        """Where a Title-Cased first sentence (a paper title) ends, or 0 if there is none.

        In `Deep Residual Learning for Image Recognition` capitals do not mark names.
        """
        stops = map(HEADING_ENDS.__contains__, self.words)
        end = next(compress(range(self.n), stops), self.n)
        words = [
            w
            for w, s in zip(self.words[:end], self.shapes[:end], strict=True)
            if s in (TITLE, LOWER) and len(w) > 3
        ]
        capitalised = sum(w[0].isupper() for w in words)
        return end if len(words) >= 4 and capitalised >= 0.75 * len(words) else 0

    def _sentence_starts(self) -> list[bool]:
        """True where capitalisation is forced: text start, after `.`, `?`, `!`, `:` or `1)`."""
        words, n, lower = self.words, len(self.words), self.lower
        initial = [False] * n
        ends = compress(range(n), self.boundaries)
        for i in [-1, *ends]:
            if i >= 0:
                word = words[i]
                if word == "." and i > 0 and lower[i - 1] in ABBREVIATIONS:
                    continue
                if word == ")" and not (
                    i > 0
                    and (words[i - 1].isdigit() or ROMAN_RE.match(words[i - 1]))
                    and (i < 2 or initial[i - 1])
                ):
                    continue
            j = i + 1
            while j < n and words[j] in OPENERS:
                initial[j] = True
                j += 1
            if j < n:
                initial[j] = True
        return initial

    def writes_in_lower_case(self, low: str) -> bool:
        """Whether a lower-case word occurs as written: `Using` is ordinary if `using` occurs.

        (A text rarely asks this, mostly never: a look through the words when asked is cheaper
        than a set of them made for every text.)
        """
        return low.islower() and low in self.words

    def span(self, first: int, last: int) -> str:
        """The text from token `first` to token `last`, as written."""
        return self.text[self.starts[first] : self.ends[last]]


def find_methods(
    text: str, emphasized: list[str], acronyms: tuple[Acronym, ...]
) -> tuple[MethodMention, ...]:
    """Introduced and mentioned artifacts of a cleaned text, one mention per artifact."""
    if not text:
        return ()
    return _Finder(text, emphasized, acronyms).run()


class _Finder:
    """One pass over a text: introduced names first, then mentioned ones."""

    def __init__(self, text: str, emphasized: list[str], acronyms: tuple[Acronym, ...]):
        self.t = _Text(text)
        self.definitions = acronym_definitions(text)
        self.expansions = {a.acronym: a.expansion for a in acronyms}
        for d in self.definitions:
            self.expansions.setdefault(d.acronym, d.expansion)
        self.emphasis = _emphasis_starts(text, emphasized)
        self.by_short_start = {d.short_start: d for d in self.definitions}
        self.by_long_start_token: dict[int, Definition] = {}  # token where the long form starts
        for d in self.definitions:
            index = self._token_at(d.long_start)
            if index is not None:
                self.by_long_start_token.setdefault(index, d)
        # acronym -> whether the text's definition names an artifact (decided once per text)
        self.defined: dict[str, bool] = {}
        self.judged: dict[Definition, bool] = {}  # _is_defined_mention, read once per definition
        for d in self.definitions:
            self.defined[d.acronym] = self.defined.get(d.acronym, False) or self._judged(d)
        self.masked = _masked_tokens(self.t, self.definitions)
        self.unmasked = [False] * self.t.n
        self.found: dict[str, MethodMention] = {}
        self.keys: dict[str, str] = {}  # every key of a found artifact -> its first key
        self.bases: set[str] = set()

    def run(self) -> tuple[MethodMention, ...]:
        self._introduced()
        self._defined_mentions()
        self._mentioned()
        return tuple(sorted(self.found.values(), key=self._first_seen))

    def _first_seen(self, mention: MethodMention) -> int:
        """Where a name (or one of its aliases) first appears: mentions come in reading order."""
        text = self.t.text
        first = len(text)
        for name in (mention.name, *mention.aliases):
            at = text.find(name)
            if 0 <= at < first:
                first = at
        return first

    # -- bookkeeping -----------------------------------------------------------------------

    def _add(self, name: str, role: str, kind: str, aliases: tuple[str, ...] = ()) -> None:
        """Record an artifact unless one of its spellings is already known."""
        name = name.strip(" ,.;:\"'“”")
        if not name or not (name[0].isalpha() or any(c.isalpha() for c in name)):
            return
        keys: list[str] = []
        kept: list[str] = []
        for spelling in (name, *aliases):
            key = method_key(spelling)
            if key and key not in keys:
                keys.append(key)
                kept.append(spelling)
        if not self.keys.keys().isdisjoint(keys):
            return
        base = method_key(_without_version(name))
        if role == "mentioned" and base in self.bases:
            return  # PostgreSQL ... PostgreSQL 16
        mention = MethodMention(name, kind, role, name, tuple(kept[1:]), tuple(keys))
        self.found[keys[0]] = mention
        for key in keys:
            self.keys[key] = keys[0]
        self.bases.add(base)

    def _known(self, name: str) -> bool:
        return method_key(name) in self.keys

    # -- introduced ------------------------------------------------------------------------

    def _introduced(self) -> None:
        t = self.t
        shapes = t.shapes
        n = t.n
        lower = t.lower
        candidates: list[int] = []  # in order, each once
        for hit in compress(range(n), t.cues):
            if lower[hit] != ",":
                candidates.append(hit)
            # a strong name before a comma, three tokens or more from the end (once: an
            # all-capital trigger word is strong too)
            elif hit and hit + 2 < n and shapes[hit - 1] == STRONG and candidates[-1:] != [hit - 1]:
                candidates.append(hit - 1)
        for i in candidates:
            low = t.lower[i]
            if low in INTRO_VERBS and self._has_subject(i):
                self._object(i + 1, self._kind_before(i))
            elif (
                low == "put"
                and i + 1 < t.n
                and t.lower[i + 1] == "forward"
                and self._has_subject(i)
            ):
                self._object(i + 2, None)
            elif low in NAMING_WORDS:
                self._named(i)
            elif low == "our" and i + 1 < t.n and t.shapes[i + 1] == STRONG:
                first, last = self._chunk(i + 1)
                if last >= first and not self._defined_generic(t.words[first]):
                    self._add_intro(first, last, None)
            elif t.shapes[i] == STRONG and self._appositive_intro(i):
                first, last = self._chunk(i)
                if first == i:
                    self._add_intro(first, last, self._kind_after(last + 1) or self._kind_before(i))
        if t.n > 2 and t.shapes[0] == STRONG and t.words[1] == ":":
            self._add_intro(0, 0, None)  # a title `Name: what it does`
        for start, (span, _) in self.emphasis.items():
            at = self._token_at(start)
            if at is None:
                continue
            i = at
            if (
                t.shapes[i] == STRONG
                and t.ends[i] - t.starts[i] == len(span)
                and not self._defined_generic(t.words[i])
                and not self._defined_mention(t.words[i])
            ):
                self._add_intro(i, i, None)

    def _appositive_intro(self, i: int) -> bool:
        """`X, a new benchmark`, `a new dataset, X,`, `X, a corpus that we generate`."""
        t = self.t
        if i + 1 >= t.n or t.words[i + 1] != ",":
            return False
        if i + 3 < t.n and t.lower[i + 2] in ARTICLES and t.lower[i + 3] in NEW_WORDS:
            return True
        if i >= 2 and t.words[i - 1] == "," and t.lower[i - 2] in KIND_OF_WORD:
            # `a new drift-heavy dataset, X,` or `our (new) benchmark, X,`
            window = t.lower[max(0, i - 9) : i - 2]
            if "our" in window[-4:] or any(
                w in NEW_WORDS and window[k - 1] in ARTICLES for k, w in enumerate(window) if k
            ):
                return True
        for j in range(i + 2, min(t.n, i + 16)):
            if t.shapes[j] in (STRONG, TITLE) or t.words[j] in {".", ";", "("}:
                return False
            if t.lower[j] in {"we", "our"} and j + 1 < t.n and t.lower[j + 1] in RELATIVE_VERBS:
                return True
        return False

    def _has_subject(self, verb: int) -> bool:
        """`we propose`, `this paper introduces`, `our proposed`, `ProtoLens introduces`."""
        t = self.t
        j = verb - 1
        while j >= 0 and t.lower[j] in ADVERBS:
            j -= 1
        if j < 0:
            return False
        word = t.lower[j]
        if word == "we":
            return True
        if t.lower[verb] == "proposed" and word in {"our", "the"}:
            return True
        if word in SUBJECT_NOUNS and j > 0 and t.lower[j - 1] in SUBJECT_DETERMINERS:
            return True
        return t.shapes[j] == STRONG and self._known(t.words[j]) and t.lower[verb].endswith("s")

    def _object(self, i: int, kind: str | None) -> None:
        """The name an intro verb introduces, if its object phrase has one."""
        t = self.t
        skipped: list[str] = []
        limit = min(t.n, i + 14)
        while i < limit:
            word, low, kind_of = t.words[i], t.lower[i], t.shapes[i]
            if i in self.by_long_start_token:
                self._add_definition(self.by_long_start_token[i], kind or _kind_from(skipped))
                return
            if kind_of == PUNCT:
                if word == "," and skipped and skipped[-1] in LIST_NOUNS:
                    i += 1
                    continue
                if word in "“\"'‘":
                    i += 1
                    continue
                if word == "(" and self._paren_definition(i) is not None:
                    definition = self._paren_definition(i)
                    assert definition is not None
                    if definition.long_start >= t.starts[i - len(skipped)]:
                        self._add_definition(definition, kind or _kind_from(skipped))
                return
            if t.starts[i] in self.emphasis:
                span, end = self.emphasis[t.starts[i]]
                last = self._token_ending(end)
                if last is not None and (kind_of in (STRONG, TITLE) or skipped[-1:] == ["called"]):
                    self._add_intro(i, last, kind or _kind_from(skipped), written=span)
                    self._list_continues(last + 1, kind or _kind_from(skipped))
                    return
            if kind_of in (STRONG, TITLE):
                first, last = self._chunk(i)
                if last < first:
                    return
                self._add_intro(first, last, kind or _kind_from(skipped))
                self._list_continues(last + 1, kind or _kind_from(skipped))
                return
            if low in OBJECT_STOPS or (
                low == "of" and (not skipped or skipped[-1] not in OF_NOUNS)
            ):
                return
            if low in NAMING_WORDS:
                return  # `_named` reads what follows
            skipped.append(low)
            i += 1

    def _paren_definition(self, i: int) -> Definition | None:
        """The definition whose short form is inside the parenthesis at token `i`."""
        if i + 1 < self.t.n:
            return self.by_short_start.get(self.t.starts[i + 1])
        return None

    def _named(self, i: int) -> None:
        """`called X`, `named X`, `namely X`: X is the paper's name for what it describes."""
        t = self.t
        j = i + 1
        if t.lower[i] == "denoted" and j < t.n and t.lower[j] in {"as", "by"}:
            j += 1
        while j < t.n and t.words[j] in "“\"'‘":
            j += 1
        if j >= t.n:
            return
        kind = self._kind_before(i)
        if t.starts[j] in self.emphasis:
            span, end = self.emphasis[t.starts[j]]
            last = self._token_ending(end)
            if last is not None:
                self._add_intro(j, last, kind, written=span)
                return
        if t.shapes[j] in (STRONG, TITLE) and not t.initial[j]:
            first, last = self._chunk(j)
            if last >= first:
                self._add_intro(first, last, kind)

    def _list_continues(self, i: int, kind: str | None) -> None:
        """`PDI-CP and JDI-CP`: further names listed right after an introduced one."""
        t = self.t
        while i + 1 < t.n and t.words[i] in {",", "and"}:
            j = i + 1
            if t.lower[j] == "and":
                j += 1
            if j >= t.n or t.shapes[j] != STRONG:
                return
            first, last = self._chunk(j)
            if last < first:
                return
            self._add_intro(first, last, kind)
            i = last + 1

    def _add_intro(
        self, first: int, last: int, kind: str | None, written: str | None = None
    ) -> None:
        """An introduced name, with its long form when the text gives one right after it."""
        t = self.t
        name = written or t.span(first, last)
        if self._is_excluded(name):
            return
        definition = self.by_long_start_token.get(first)
        if definition is not None and not written:
            self._add_definition(definition, kind)
            return
        definition = self.by_short_start.get(t.starts[first])
        if definition is not None and definition.acronym.rstrip("s") == name.rstrip("s"):
            self._add_definition(definition, kind)
            return
        if last + 3 < t.n and t.words[last + 1] == "(" and t.words[last + 3] == ")":
            inner = last + 2
            if t.shapes[inner] == STRONG:  # Rate-Constrained Training (BackSlash)
                after = kind or self._kind_after(last + 4) or _kind_of_name(name)
                self._add(t.words[inner], "introduced", after, (name,))
                return
        self._add(name, "introduced", kind or self._kind_after(last + 1) or _kind_of_name(name))

    def _add_definition(self, d: Definition, kind: str | None) -> None:
        """An introduced acronym: `Core Context Aware (CCA) Attention` becomes `CCA-Attention`."""
        t = self.t
        end_token = self._token_at_or_after(d.end)
        name, alias = d.acronym, d.expansion
        if end_token is not None and t.shapes[end_token] == TITLE and not t.initial[end_token]:
            word = t.words[end_token]
            joined = f"{d.acronym}-{word}"
            name = joined if joined in t.text else f"{d.acronym} {word}"
            alias = f"{d.expansion} {word}"
            for part in (d.acronym, d.expansion):  # claimed: not a mention of their own
                self.keys.setdefault(method_key(part), method_key(name))
        after = self._kind_after(end_token) if end_token is not None else None
        self._add(name, "introduced", kind or after or _kind_of_name(alias), (alias,))

    def _kind_before(self, i: int) -> str | None:
        """The kind noun closest before token `i` in its clause (`a framework called X`)."""
        t = self.t
        for j in range(i - 1, max(-1, i - 5), -1):
            if t.shapes[j] == PUNCT and t.words[j] != ",":
                return None
            kind = KIND_OF_WORD.get(t.lower[j])
            if kind:
                return kind
        return None

    def _kind_after(self, i: int) -> str | None:
        """The kind noun of what follows: `, a novel framework`, `benchmark`, `datasets`."""
        t = self.t
        j = i
        if j < t.n and t.words[j] == ",":
            j += 1
        for k in range(j, min(t.n, j + 8)):
            low = t.lower[k]
            kind = KIND_OF_WORD.get(low)
            if kind:
                return kind
            if t.shapes[k] == PUNCT or low in OBJECT_STOPS:
                return None
        return None

    # -- mentioned -------------------------------------------------------------------------

    def _defined_mentions(self) -> None:
        """Acronyms defined in the text that name a technique, model or measure in use."""
        for d in self.definitions:
            if self._known(d.acronym) or self._known(d.expansion):
                continue
            if self._judged(d):
                self._add(d.acronym, "mentioned", _kind_of_name(d.expansion), (d.expansion,))

    def _judged(self, d: Definition) -> bool:
        """`_is_defined_mention` (which reads only the text), remembered."""
        judged = self.judged.get(d)
        if judged is None:
            judged = self.judged[d] = self._is_defined_mention(d)
        return judged

    def _is_defined_mention(self, d: Definition) -> bool:
        """A defined acronym naming an artifact, not a field, task, class or passing quantity."""
        if generic_key(d.acronym) in GENERIC or generic_key(d.short) in GENERIC:
            return False
        if not d.acronym[:1].isalnum():
            return False
        words = d.long.replace("–", " ").split()
        content = words
        for index, word in enumerate(words):
            if word.lower() in FUNCTION_WORDS and index:
                content = words[:index]
                break
        head_written = content[-1].split("-")[-1]
        head = head_written.lower()
        plural = d.short != d.acronym or (
            content is words and singular_word(head_written) != head_written
        )
        if plural or self._followed_by_plural(d):
            return False
        singular_head = singular_word(head)
        if singular_head in GENERIC_HEADS:
            return False
        titled = sum(w[:1].isupper() for w in words[1:]) >= max(1, len(words) - 2)
        if not titled and singular_head in LOWERCASE_GENERIC_HEADS:
            return False
        if singular_head in MEASURE_HEADS:
            return self._reused(d) or d.long_start in self.emphasis
        return True

    def _followed_by_plural(self, d: Definition) -> bool:
        """`pointwise information (PI) measures`: the acronym qualifies a plural noun."""
        i = self._token_at_or_after(d.end)
        if i is None:
            return False
        return self.t.lower[i] in CLASS_NOUNS

    def _reused(self, d: Definition) -> bool:
        """The acronym appears again after its definition."""
        return bool(re.search(rf"(?<![\w-]){re.escape(d.acronym)}(?![\w])", self.t.text[d.end :]))

    def _defined_generic(self, token: str) -> bool:
        """A token that the text defines as an acronym of a generic field, task or class."""
        token = token[:-1] if token.endswith("s") and token[:-1] in self.expansions else token
        return token in self.expansions and not self.defined.get(token, False)

    def _defined_mention(self, token: str) -> bool:
        """A token that the text defines as an acronym naming an artifact (`RoPE`)."""
        return self.defined.get(token, False)

    def _mentioned(self) -> None:
        """Runs of name-shaped words that are not generic, initial capitals or the paper's own."""
        t = self.t
        masked = self.masked
        n, shapes, words, lower, initial = t.n, t.shapes, t.words, t.lower, t.initial
        done = -1
        for i in compress(range(n), t.name_shaped):
            if i <= done or masked[i]:
                continue
            if shapes[i] == ADJ:
                self._adjective_root(i)
                continue
            if (
                shapes[i] == TITLE
                and (initial[i] or i < t.heading_end)
                and (
                    i + 1 == n
                    or (
                        shapes[i + 1] not in (STRONG, TITLE, NUM)
                        and words[i + 1] != "!"
                        and lower[i + 1] not in NAME_NOUNS
                    )
                )
            ):
                # A lone capitalised word that starts a sentence or is in the heading: _chunk
                # gives (i, i) (nothing can extend it) and _judge_chunk returns at once.
                done = i
                continue
            first, last = self._chunk(i, mask=True)
            if last >= first:
                self._judge_chunk(first, last)
                done = last

    def _chunk(self, i: int, mask: bool = False) -> tuple[int, int]:
        """The run of name words starting at `i`: titles and strong names, then a version."""
        t = self.t
        masked = self.masked if mask else self.unmasked
        n, shapes, words, initial = t.n, t.shapes, t.words, t.initial
        first = i
        j = i
        while (
            j < n
            and not masked[j]
            and (shapes[j] in (STRONG, TITLE) or (words[j] == "!" and self._brand_bang(j)))
        ):
            if j > first and initial[j] and words[j - 1] != "!":
                break
            j += 1
        last = j - 1
        if last < first:
            return first, last
        if j < t.n and t.shapes[j] == NUM and not masked[j] and self._version_follows(j):
            last = j
            j += 1
        if j < t.n and t.lower[j] in NAME_NOUNS:
            last = j
        # a sentence-initial ordinary word before a name: `Using ZebraLogic`
        while (
            first < last
            and t.initial[first]
            and t.shapes[first] == TITLE
            and (self._ordinary_initial(first))
        ):
            first += 1
        return first, last

    def _brand_bang(self, j: int) -> bool:
        """`Yahoo! R6A`: an exclamation mark inside a name."""
        t = self.t
        return (
            0 < j < t.n - 1
            and t.shapes[j - 1] == TITLE
            and t.shapes[j + 1] == STRONG
            and t.starts[j] == t.ends[j - 1]
        )

    def _version_follows(self, j: int) -> bool:
        """A number right after a name is its version or size, unless a unit or `%` follows."""
        t = self.t
        if j + 1 < t.n and (t.words[j + 1] in {"%", "×"} or t.lower[j + 1] in UNIT_WORDS):
            return False
        return t.starts[j] == t.ends[j - 1] + 1

    def _ordinary_initial(self, i: int) -> bool:
        """A sentence-initial capitalised word that is an ordinary word, not part of a name."""
        low = self.t.lower[i]
        if low in INITIAL_STOPWORDS or low.endswith(("ing", "ed", "ly")):
            return True
        return self.t.writes_in_lower_case(low)

    def _judge_chunk(self, first: int, last: int) -> None:
        """Decide whether a run of name words is a mentioned artifact."""
        t = self.t
        words = t.words[first : last + 1]
        shapes = t.shapes[first : last + 1]
        if "!" in words:
            shapes = [s for w, s in zip(words, shapes, strict=True) if w != "!"]
            words = [w for w in words if w != "!"]
        if STRONG not in shapes and (t.initial[first] or first < t.heading_end):
            return  # the same early return as below, before the costlier checks
        name = t.span(first, last)
        if self._is_excluded(name) or self._followed_by(last, HARDWARE_NOUNS):
            return
        if last + 2 < t.n and t.lower[last + 1] == "et" and t.lower[last + 2] == "al":
            return
        if STRONG in shapes:
            if (
                t.initial[first]
                and shapes[0] == TITLE
                and len(words) > 1
                and STRONG not in shapes[:1]
            ):
                return
            if len(words) == 1 and self._defined_generic(words[0]):  # the one word is strong
                return
            if len(words) == 1 and self._known(words[0].rstrip("s")):
                return
            self._add(name, "mentioned", self._mention_kind(first, last, name))
            return
        titles = [w for w, s in zip(words, shapes, strict=True) if s == TITLE]
        if t.initial[first] or first < t.heading_end:
            return
        if len(titles) >= 2:
            head = titles[-1].split("-")[-1].lower()
            if singular_word(head) in TITLE_GENERIC_HEADS:
                return
            self._add(name, "mentioned", self._mention_kind(first, last, name))
            return
        if self._named_by_kind(first, last):
            if t.words[last + 1][0].isupper():  # the Anomaly Transformer: the kind is named too
                last += 1
                name = t.span(first, last)
            self._add(name, "mentioned", self._mention_kind(first, last, name))
        elif len(words) > 1 or self._cued(first) or self._listed_with_name(first, last):
            self._add(name, "mentioned", self._mention_kind(first, last, name))

    def _adjective_root(self, i: int) -> None:
        """`BadNets-style`, `LASER-based`: the name before an adjective suffix is a mention."""
        t = self.t
        word = t.words[i]
        root, _, suffix = word.rpartition("-")
        if not root or self._is_excluded(root):
            return
        root_shape = shape(root)
        if root_shape == STRONG and not self._defined_generic(root):
            self._add(root, "mentioned", self._mention_kind(i, i, root))
        elif root_shape == TITLE and suffix == "style" and not t.initial[i]:
            self._add(root, "mentioned", "model")

    def _named_by_kind(self, first: int, last: int) -> bool:
        """`the Adam optimizer`, `the Pile dataset`: a capitalised word between `the` and a kind."""
        t = self.t
        return (
            first > 0
            and t.lower[first - 1] == "the"
            and last + 1 < t.n
            and t.lower[last + 1] in KIND_OF_WORD
            and t.lower[last + 1] not in {"test", "split", "head", "layer", "block"}
        )

    def _cued(self, first: int) -> bool:
        """A single capitalised word right after `like`, `such as`, `over`, `compared with` ..."""
        t = self.t
        if first < 1:
            return False
        if t.lower[first - 1] in CUE_BEFORE:
            return True
        return first >= 2 and (t.lower[first - 2], t.lower[first - 1]) in CUE_PAIRS

    def _listed_with_name(self, first: int, last: int) -> bool:
        """`scVI or Harmony`, `Cora, PubMed, Chameleon, Squirrel`: a capitalised word in a list
        (of names separated by commas, `and`, `or`) that holds a strong name."""
        t = self.t
        for step, start in ((-1, first - 1), (1, last + 1)):
            j, items = start, 0
            while 0 <= j < t.n and items < 8:
                gap = j
                while 0 <= j < t.n and t.lower[j] in COORDINATORS:
                    j += step
                if j == gap or not 0 <= j < t.n or self.masked[j]:
                    break
                if t.shapes[j] == STRONG:
                    return not self._defined_generic(t.words[j])
                if t.shapes[j] != TITLE:
                    break
                j += step
                items += 1
        return False

    def _followed_by(self, last: int, nouns: frozenset[str]) -> bool:
        return last + 1 < self.t.n and self.t.lower[last + 1] in nouns

    def _is_excluded(self, name: str) -> bool:
        """Generic words and the paper's own names are never mentions."""
        return generic_key(name) in GENERIC or self._known(name)

    def _mention_kind(self, first: int, last: int, name: str) -> str:
        """The kind of a mention: a noun after it or its list, one before it, or its shape.

        `MSD Pancreas and NIH Pancreas-CT datasets`, `models such as StarCoder2-7B`, and a name
        evaluated `on` (`On LLFF, Mip-NeRF 360 and DTU`) is a dataset.
        """
        t = self.t
        j = last + 1
        while j < t.n and j <= last + 10:
            low = t.lower[j]
            kind = KIND_OF_WORD.get(low)
            if kind:
                return kind
            if not (t.shapes[j] in (STRONG, TITLE, NUM) or low in COORDINATORS):
                break
            j += 1
        j = first - 1
        while j >= 0 and j >= first - 12:
            low = t.lower[j]
            kind = KIND_OF_WORD.get(low)
            if kind:
                return kind
            if low == "on" and not (j > 0 and t.lower[j - 1] in {"based", "built", "depends"}):
                return "dataset"
            if not (t.shapes[j] in (STRONG, TITLE, NUM) or low in LIST_GLUE):
                break
            j -= 1
        return _kind_of_name(name)

    # -- positions -------------------------------------------------------------------------

    def _token_at(self, offset: int) -> int | None:
        """The token starting exactly at a character offset."""
        starts = self.t.starts
        index = bisect_left(starts, offset)
        return index if index < len(starts) and starts[index] == offset else None

    def _token_at_or_after(self, offset: int) -> int | None:
        index = bisect_left(self.t.starts, offset)
        return index if index < self.t.n else None

    def _token_ending(self, offset: int) -> int | None:
        """The token ending exactly at a character offset."""
        index = bisect_left(self.t.starts, offset) - 1
        return index if index >= 0 and self.t.ends[index] == offset else None


UNIT_WORDS = frozenset(
    "points point times hours hour minutes seconds days tokens parameters params bits bytes "
    "percent pp dimensions layers".split()
)
# Heads of capitalised phrases that name a class, a field or a result, not an artifact.
TITLE_GENERIC_HEADS = frozenset(
    """
    theory theorem inequality lemma law principle conjecture hypothesis problem learning
    network autoencoder transformer machine intelligence processing vision engineering
    service model university institute lab laboratory conference workshop challenge
    """.split()
)


def _emphasis_starts(text: str, spans: list[str]) -> dict[int, tuple[str, int]]:
    """Where emphasised spans occur in the cleaned text: start -> (span, end)."""
    found: dict[int, tuple[str, int]] = {}
    for span in dict.fromkeys(spans):
        if len(span) < 2:
            continue
        start = text.find(span)
        while start >= 0:
            end = start + len(span)
            if (start == 0 or not text[start - 1].isalnum()) and (
                end == len(text) or not text[end].isalnum()
            ):
                found.setdefault(start, (span, end))
            start = text.find(span, end)
    return found


def _masked_tokens(t: _Text, definitions: tuple[Definition, ...]) -> list[bool]:
    """Tokens inside acronym definitions: the definition itself decides what they name."""
    masked = [False] * t.n
    for d in definitions:
        index = bisect_left(t.starts, d.start)
        while index < t.n and t.starts[index] < d.end:
            masked[index] = True
            index += 1
    return masked


@lru_cache(maxsize=4096)
def _without_version(name: str) -> str:
    """`PostgreSQL 16` -> `PostgreSQL`, `LLaVA-1.5-13B` -> `LLaVA-1.5`: a version or size."""
    head, _, tail = name.rpartition(" ")
    if head and UNIT_RE.match(tail):
        return head
    head, _, tail = name.rpartition("-")
    return head if head and SIZE_RE.match(tail) else name


def _kind_from(words: list[str]) -> str | None:
    """The last kind noun among the (lower-case) words before a name."""
    for word in reversed(words):
        kind = KIND_OF_WORD.get(word)
        if kind:
            return kind
    return None


@lru_cache(maxsize=4096)
def _kind_of_name(name: str) -> str:
    """A kind guessed from the name itself: `SNS-Bench` is a benchmark, `SignSGD` an optimizer."""
    low = name.lower()
    if "bench" in low or low.endswith(("eval", "-env", "qa", "-hard", "-lite")):
        return "benchmark"
    if low.endswith(("sgd", "adam", "adamw", "optimizer", "prop")):
        return "optimizer"
    if low.endswith(("loss", "entropy")):
        return "loss"
    if low.endswith(("distance", "divergence", "information", "score")):
        return "metric"
    if SIZE_SUFFIX_RE.search(name) or MODEL_SHAPE_RE.search(low):
        return "model"
    if low.endswith(("algorithm", "sampling", "search")):
        return "algorithm"
    return "method"
