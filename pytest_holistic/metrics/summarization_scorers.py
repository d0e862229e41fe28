"""The model-backed summarisation scorers: BERTScore, SummaC-ZS, QAFactEval, and nltk's WordNet for METEOR.

* **BERTScore** (Zhang et al. 2020; the ``bert-score`` package's conventions, which HELM and fmeval call):
  each text is encoded as the tokenizer encodes one sentence (special tokens added, truncated to the model's
  limit); the token vectors of one hidden layer are L2-normalised; precision is the mean over the candidate's
  tokens of the best cosine with any reference token, recall the mean over the reference's tokens of the best
  cosine with any candidate token, F = 2PR/(P+R). Without idf weighting (the default of HELM and fmeval) every
  token weighs 1 except the tokenizer's CLS and SEP tokens, which weigh 0 but can still be matched. An empty
  candidate or reference scores 0, as bert-score sets it. With several references P, R and F are each the
  maximum over them. The layer is ``FOLDER#LAYER`` (``hidden_states[LAYER]``, 0 being the embeddings), by
  default the last one; bert-score's tuned layers are 9 for ``microsoft/deberta-base`` (HELM),
  18 for ``microsoft/deberta-large-mnli`` and 40 for ``microsoft/deberta-xlarge-mnli`` (fmeval's default).
  HELM also rescales with bert-score's baseline files; we report raw scores, as fmeval does.
* **SummaC-ZS** (Laban et al. 2022) at sentence granularity, as HELM's copy of ``model_summac.py``: the
  article and the summary are split into sentences (nltk's Punkt, sentences of 10 characters or fewer
  dropped, at most 100 article sentences); every (article sentence, summary sentence) pair goes through the
  NLI classifier (premise first, truncated from the premise to 500 tokens) and a softmax; per summary sentence
  the score is the maximum entailment probability over article sentences minus the maximum contradiction
  probability; the instance score is their mean. No sentence on either side gives 0, as SummaC returns.
  HELM uses ``tals/albert-xlarge-vitaminc-mnli`` in half precision on a GPU; here any local classifier whose
  ``id2label`` names an entailment and a contradiction label, in float32. As HELM, the summary is stripped and
  loses one leading ``{`` and one trailing ``}``, and the article too (``summary_text.remove_braces``).
* **QAFactEval** (Fabbri et al. 2022) needs a question generator, a QA model and LERC; HELM itself only
  reads precomputed scores. Here the user supplies the scorer: ``MODULE:FUNCTION``, a callable
  ``(summaries, articles) -> scores``, given both with HELM's braces removed (HELM keys its scores by that
  summary). BERTScore is fmeval's (raw, texts as given); HELM's also removes the braces and rescales.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import importlib
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from ..builtin_options import split_bertscore_spec
from ..errors import error_line
from .base import ContextScorer, ScorerError, ScorerUnavailable
from .summary_text import remove_braces
from .tokenize import sent_tokenize
from .wordnet_senses import sense_index_text

NEEDS = {
    "bertscore": "BERTScore needs a local encoder folder: pass --holistic-bertscore-model FOLDER[#LAYER]",
    "summac": "SummaC needs an NLI classifier: pass --holistic-summac-model hf:FOLDER",
    "qafacteval": "QAFactEval needs a scorer: pass --holistic-qafacteval-scorer MODULE:FUNCTION, (summaries, articles) -> scores",
}
"""The skip line of each model metric when the user named no model."""

SUMMAC_MIN_CHARS = 10
SUMMAC_MAX_DOC_SENTENCES = 100
SUMMAC_MAX_TOKENS = 500
BATCH = 16


# -- specs ---------------------------------------------------------------------------------------------


def make(metric: str, spec: str) -> ContextScorer:
    """The scorer of one model metric (``spec`` already checked); libraries load on first score."""
    if metric.startswith("bertscore"):
        folder, layer = split_bertscore_spec(spec)
        return BertScoreScorer(_bertscore_engine(str(folder), layer), metric.rpartition("_")[2])
    if metric == "summac":
        return SummaCScorer(spec[3:])
    return CallableScorer(spec)


# -- shared helpers -------------------------------------------------------------------------------------


class _Pretrained(Protocol):
    """A transformers Auto class: what ``_load`` calls."""

    def from_pretrained(self, folder: str, /) -> Any: ...


def _load(kind: _Pretrained, folder: str, what: str) -> Any:
    try:
        return kind.from_pretrained(folder)
    except (OSError, ValueError) as error:
        raise ScorerUnavailable(f"{what} {folder!r} cannot be loaded: {error_line(error)}") from None


def _version(folder: str) -> str:
    """A short hash of the folder's config.json: which weights scored (folders carry no commit)."""
    config = Path(folder) / "config.json"
    return hashlib.sha256(config.read_bytes()).hexdigest()[:12] if config.is_file() else "unresolved"


# -- BERTScore -------------------------------------------------------------------------------------------


class BertScoreEngine:
    """One encoder, P/R/F for a batch of (candidate, references); the last batch is remembered for the P, R and F scorers."""

    def __init__(self, folder: str, layer: int | None) -> None:
        self.folder = folder
        self.layer = layer
        self._model: Any = None
        self._tokenizer: Any = None
        self._last: tuple[tuple[Any, ...], list[tuple[float, float, float]]] | None = None

    def _ready(self) -> None:
        if self._model is not None:
            return
        try:
            from transformers import AutoModel, AutoTokenizer
        except ImportError:
            raise ScorerUnavailable("BERTScore needs transformers and torch: pip install transformers torch") from None
        self._tokenizer = _load(AutoTokenizer, self.folder, "BERTScore encoder")
        model = _load(AutoModel, self.folder, "BERTScore encoder")
        layers = int(getattr(model.config, "num_hidden_layers", 0) or 0)
        if self.layer is not None and self.layer > layers:
            raise ScorerUnavailable(f"BERTScore layer {self.layer} is past the {layers} layers of {self.folder!r}")
        self._model = model.eval()

    def _encode(self, text: str) -> list[int]:
        tokenizer = self._tokenizer
        text = text.strip()  # an empty text encodes as its special tokens alone
        limit = tokenizer.model_max_length if tokenizer.model_max_length < 1_000_000 else None
        return list(tokenizer.encode(text, add_special_tokens=True, truncation=limit is not None, max_length=limit))

    def _embed(self, texts: Sequence[str]) -> list[tuple[Any, Any]]:
        """(unit token vectors, token weights) per text."""
        import torch

        tokenizer = self._tokenizer
        specials = {token for token in (tokenizer.cls_token_id, tokenizer.sep_token_id) if token is not None}
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        out: list[tuple[Any, Any]] = []
        encoded = [self._encode(text) for text in texts]
        for start in range(0, len(encoded), BATCH):
            chunk = encoded[start : start + BATCH]
            width = max(len(ids) for ids in chunk)
            ids = torch.tensor([row + [pad] * (width - len(row)) for row in chunk])
            mask = torch.tensor([[1] * len(row) + [0] * (width - len(row)) for row in chunk])
            with torch.no_grad():
                states = self._model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states
            hidden = states[self.layer if self.layer is not None else -1].float()
            for row, tokens in enumerate(chunk):
                vectors = torch.nn.functional.normalize(hidden[row, : len(tokens)], dim=-1)
                weights = torch.tensor([0.0 if token in specials else 1.0 for token in tokens])
                out.append((vectors, weights))
        return out

    def scores(self, candidates: Sequence[str], references: Sequence[Sequence[str]]) -> list[tuple[float, float, float]]:
        """(P, R, F) per candidate, each the maximum over its references."""
        key = (tuple(candidates), tuple(tuple(golds) for golds in references))
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        self._ready()
        flat = [gold for golds in references for gold in golds]
        embedded = self._embed([*candidates, *flat])
        candidate_vectors, reference_vectors = embedded[: len(candidates)], embedded[len(candidates) :]
        results: list[tuple[float, float, float]] = []
        offset = 0
        for index, golds in enumerate(references):
            triples = [_greedy_match(candidate_vectors[index], reference_vectors[offset + k]) for k in range(len(golds))]
            offset += len(golds)
            best = [max((triple[m] for triple in triples), default=0.0) for m in range(3)]
            results.append((best[0], best[1], best[2]))
        self._last = (key, results)
        return results


def _greedy_match(candidate: tuple[Any, Any], reference: tuple[Any, Any]) -> tuple[float, float, float]:
    """BERTScore of one pair: weighted means of the best cosines both ways, and their harmonic mean."""
    (c_vectors, c_weights), (r_vectors, r_weights) = candidate, reference
    if float(c_weights.sum()) == 0.0 or float(r_weights.sum()) == 0.0:
        return 0.0, 0.0, 0.0
    similarity = c_vectors @ r_vectors.T
    precision = float((similarity.max(dim=1).values * c_weights).sum() / c_weights.sum())
    recall = float((similarity.max(dim=0).values * r_weights).sum() / r_weights.sum())
    f1 = 2 * precision * recall / (precision + recall) if precision + recall != 0 else 0.0
    return precision, recall, f1


@functools.cache
def _bertscore_engine(folder: str, layer: int | None) -> BertScoreEngine:
    """One engine per (folder, layer) and process, shared by the P, R and F scorers."""
    return BertScoreEngine(folder, layer)


class BertScoreScorer:
    """One of BERTScore's P, R, F over (texts, references)."""

    _INDEX = {"precision": 0, "recall": 1, "f1": 2}

    def __init__(self, engine: BertScoreEngine, measure: str) -> None:
        self._engine = engine
        self._index = self._INDEX[measure]
        layer = f", layer {engine.layer}" if engine.layer is not None else ", last layer"
        self.name = f"BERTScore {measure} ({engine.folder}{layer}, no idf, no baseline rescaling)"

    @property
    def version(self) -> str:
        return _version(self._engine.folder)

    def score(self, texts: Sequence[str], references: Sequence[Sequence[str]]) -> list[float]:
        return [triple[self._index] for triple in self._engine.scores([text.strip() for text in texts], references)]


# -- SummaC ----------------------------------------------------------------------------------------------


def summac_sentences(text: str) -> list[str]:
    """SummaC's sentence split: Punkt sentences longer than 10 characters."""
    return [sentence for sentence in sent_tokenize(text) if len(sentence) > SUMMAC_MIN_CHARS]


def _label_index(labels: dict[int, str], word: str) -> int | None:
    found = [index for index, label in labels.items() if word in str(label).lower()]
    return found[0] if len(found) == 1 else None


class SummaCScorer:
    """SummaC-ZS (sentence granularity) of each summary against its article, with a user-supplied NLI classifier."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.name = f"SummaC-ZS sentence ({model})"
        self._loaded: tuple[Any, Any, int, int] | None = None

    @property
    def version(self) -> str:
        return _version(self.model)

    def _ready(self) -> tuple[Any, Any, int, int]:
        if self._loaded is None:
            try:
                from transformers import AutoModelForSequenceClassification, AutoTokenizer
            except ImportError:
                raise ScorerUnavailable("SummaC needs transformers and torch: pip install transformers torch") from None
            tokenizer = _load(AutoTokenizer, self.model, "SummaC classifier")
            classifier = _load(AutoModelForSequenceClassification, self.model, "SummaC classifier").eval()
            labels = {int(index): str(label) for index, label in classifier.config.id2label.items()}
            entail, contradict = _label_index(labels, "entail"), _label_index(labels, "contradict")
            if entail is None or contradict is None:
                raise ScorerUnavailable(
                    f"SummaC classifier {self.model!r} needs one entailment and one contradiction label; "
                    f"its labels are {sorted(labels.values())}"
                )
            self._loaded = (tokenizer, classifier, entail, contradict)
        return self._loaded

    def _probabilities(self, pairs: list[tuple[str, str]]) -> Any:
        import torch

        tokenizer, classifier, _entail, _contradict = self._ready()
        rows = []
        for start in range(0, len(pairs), BATCH):
            chunk = pairs[start : start + BATCH]
            batch = tokenizer(
                [premise for premise, _ in chunk],
                [hypothesis for _, hypothesis in chunk],
                padding=True,
                truncation="only_first",
                max_length=SUMMAC_MAX_TOKENS,
                return_tensors="pt",
            )
            with torch.no_grad():
                rows.append(torch.softmax(classifier(**batch).logits.float(), dim=-1))
        return torch.cat(rows)

    def score(self, texts: Sequence[str], articles: Sequence[str]) -> list[float]:
        tokenizer, classifier, entail, contradict = self._ready()
        splits = [
            (summac_sentences(remove_braces(article))[:SUMMAC_MAX_DOC_SENTENCES], summac_sentences(remove_braces(text.strip())))
            for text, article in zip(texts, articles, strict=True)
        ]
        pairs = [(premise, hypothesis) for document, summary in splits for hypothesis in summary for premise in document]
        probabilities = self._probabilities(pairs) if pairs else None
        results, offset = [], 0
        for document, summary in splits:
            if not document or not summary:
                results.append(0.0)
                continue
            per_sentence = []
            for _ in summary:
                block = probabilities[offset : offset + len(document)]  # type: ignore[index]
                offset += len(document)
                per_sentence.append(float(block[:, entail].max()) - float(block[:, contradict].max()))
            results.append(sum(per_sentence) / len(per_sentence))
        return results


# -- QAFactEval ------------------------------------------------------------------------------------------


class CallableScorer:
    """Scores from a user's ``MODULE:FUNCTION``, called once per shard with (summaries, articles)."""

    def __init__(self, spec: str) -> None:
        module_name, _, function_name = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            reason = f"QAFactEval scorer module {module_name!r} cannot be imported: {error_line(error)}"
            raise ScorerUnavailable(reason) from None
        function = getattr(module, function_name, None)
        if not callable(function):
            raise ScorerUnavailable(f"QAFactEval scorer {spec!r}: {module_name} has no callable {function_name!r}")
        self._function = function
        self.name = f"QAFactEval ({spec})"
        self.version = getattr(module, "__version__", "user")

    def score(self, texts: Sequence[str], articles: Sequence[str]) -> list[float]:
        values = list(
            self._function([remove_braces(text.strip()) for text in texts], [remove_braces(article) for article in articles])
        )
        if len(values) != len(texts):
            raise ScorerError(f"{self.name} returned {len(values)} scores for {len(texts)} summaries")
        return [float(value) for value in values]


# -- WordNet for nltk -----------------------------------------------------------------------------------

LEXNAMES = [
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
]
"""WordNet 3.0's lexicographer files in number order (lexnames(5WN)); Debian's wordnet-base lacks the file nltk reads."""
_LEX_POS = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
_NLTK_READS = frozenset({"index", "data", "noun", "verb", "adj", "adv", "cntlist"})
"""The files nltk's reader opens: index.*, data.*, the *.exc lists, and cntlist.rev for lemma counts."""


def lexnames_text() -> str:
    """The ``lexnames`` file: ``NN<TAB>name<TAB>syntactic category`` per line."""
    return "".join(f"{number:02d}\t{name}\t{_LEX_POS[name.split('.')[0]]}\n" for number, name in enumerate(LEXNAMES))


_LAYOUT_VERSION = 2
"""Bumped whenever the layout's files change, so a folder an earlier version wrote (without a derived index.sense,
say) is never taken for a finished one."""


def _wordnet_layout(source: Path, cache: Path) -> Path:
    """An nltk data folder holding ``corpora/wordnet``: the dict files of ``source`` plus ``lexnames``, written once.

    nltk resolves ``corpora/wordnet`` on its data path while loading (to map sense keys), so the corpus must
    carry that name; the data folder's name is keyed by the layout's version, the source folder and its files'
    sizes. A source without ``index.sense`` (Debian's wordnet-base alone) gets one derived from its data and index
    files. A folder counts as finished only when it holds every file the layout writes; one that does not (left by
    another version, or emptied by hand) is rebuilt, under a lock so concurrent workers build it once.
    """
    files = sorted(path for path in source.iterdir() if path.is_file() and path.name.split(".")[0] in _NLTK_READS)
    key = hashlib.sha256(
        f"layout {_LAYOUT_VERSION}\n".encode()
        + "".join(f"{path.name}:{path.stat().st_size}\n" for path in files).encode()
        + str(source).encode()
    )
    data = cache / f"nltk_data-{key.hexdigest()[:16]}"
    expected = {path.name for path in files} | {"index.sense", "lexnames"}
    if _holds(data / "corpora" / "wordnet", expected):
        return data
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / f"{data.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _holds(data / "corpora" / "wordnet", expected):
            shutil.rmtree(data, ignore_errors=True)
            _build_layout(source, files, data)
    return data


def _holds(folder: Path, names: set[str]) -> bool:
    """Whether ``folder`` has a file of every name in ``names``."""
    try:
        present = {path.name for path in folder.iterdir() if path.is_file()}
    except OSError:
        return False
    return names <= present


def _build_layout(source: Path, files: list[Path], data: Path) -> None:
    """Write the layout in a staging folder beside ``data`` and rename it into place: readers never see half of it."""
    staging = Path(tempfile.mkdtemp(prefix=".nltk_data-", dir=data.parent))
    corpus = staging / "corpora" / "wordnet"
    try:
        corpus.mkdir(parents=True)
        for path in files:  # copies: nltk refuses symlinks and hard links (CWE-59)
            shutil.copyfile(path, corpus / path.name)
        if not (corpus / "index.sense").is_file():
            (corpus / "index.sense").write_text(sense_index_text(source), encoding="utf-8")
        (corpus / "lexnames").write_text(lexnames_text(), encoding="utf-8")
        staging.rename(data)
    except BaseException:  # a full disk, files that are not WordNet's: leave no half-made folder
        shutil.rmtree(staging, ignore_errors=True)
        raise


def meteor_unavailable() -> str | None:
    """Why METEOR cannot run here (no WordNet dict files), in one line, or None."""
    from ..wordnet_files import wordnet_unavailable

    if wordnet_unavailable() is not None:
        return (
            "METEOR needs WordNet 3.0: install Debian's wordnet-base (apt-get install wordnet-base) "
            "or set WNSEARCHDIR to a WordNet 3.0 dict folder"
        )
    return None


def nltk_wordnet() -> Any:
    """nltk's WordNet reader over the system's WordNet 3.0 (the synonym perturbation's folder), or a skip reason.

    nltk (>= 3.9) opens corpus files only below a folder on its data path, and reads that path from the nltk module
    loaded *now*: a host that re-imports nltk (pytest's in-process runs restore ``sys.modules``) gets a fresh, empty
    path, so the folder is put back on every call, not only when the reader is first built. Readers are kept per
    WordNet folder, so a changed ``WNSEARCHDIR`` is honoured.
    """
    import nltk.data

    from ..wordnet_files import wordnet_folder

    reader, data = _nltk_wordnet(str(wordnet_folder()))
    if str(data) not in map(str, nltk.data.path):
        nltk.data.path.append(str(data))  # last: it shadows nothing
    return reader


@functools.cache
def _nltk_wordnet(folder: str) -> tuple[Any, Path]:
    from ..paths import cache_root

    reason = meteor_unavailable()
    if reason is not None:
        raise ScorerUnavailable(reason)
    try:
        data = _wordnet_layout(Path(folder), cache_root())
    except OSError as error:
        reason = f"METEOR cannot lay out WordNet for nltk: {error}; set PYTEST_HOLISTIC_CACHE_DIR to a writable folder"
        raise ScorerUnavailable(reason) from None
    except (KeyError, ValueError, IndexError) as error:
        reason = (
            f"METEOR cannot derive WordNet's sense index from {folder} ({type(error).__name__}: {error}): "
            "its files are not WordNet 3.0's; point WNSEARCHDIR at a WordNet 3.0 dict folder"
        )
        raise ScorerUnavailable(reason) from None
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    if str(data) not in map(str, nltk.data.path):
        nltk.data.path.append(str(data))  # the reader's constructor opens files already
    corpus = data / "corpora" / "wordnet"
    try:
        with warnings.catch_warnings():  # "multilingual functions are not available": METEOR is English only
            warnings.simplefilter("ignore", UserWarning)
            return WordNetCorpusReader(nltk.data.FileSystemPathPointer(str(corpus)), None), data
    except (OSError, LookupError) as error:  # a file removed under the reader's feet, a folder nltk cannot resolve
        reason = f"METEOR cannot read WordNet from {corpus} ({error_line(error)}); delete that folder and run again"
        raise ScorerUnavailable(reason) from None
