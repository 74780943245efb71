"""Effects of an inferred command, read from what its documentation says (issue 20).

A command is judged by the worst case of everything documented about it: its name, the
sentence that says what it is for (a page's NAME line, a listing's description), and the
descriptions of its options (`find` deletes through `-delete`; `gzip --keep` "keep (don't
delete) input files" says that gzip deletes them otherwise — an option that guards
against a risk documents the risk). Three outcomes:

- **destructive** (`destructive: true`, `filesystem.write`/`delete: true`): a verb that
  destroys (kill, shred, wipe) or one that removes with a thing stored as its object
  ("removes untracked files", "delete the branch"), anywhere;
- **writes** (`filesystem.write: true`): a verb that makes or changes something;
- **read-only** (`filesystem.write: false`, `delete: false`): the command's name or purpose
  says it only looks (list, show, print, compare) and nothing in its name, purpose or
  options says it writes or destroys. This is the one claim of safety inference makes,
  and it is made only on positive evidence with no evidence against (decision 282).

What the text does not reveal stays unknown. Words are matched, never tool names.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence

import msgspec

from atipkit.model import UNSET, Effects, FilesystemEffects


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_DESTROYS = _words(
    "kill terminate shred wipe erase destroy purge prune truncate overwrite clobber "
    "uninstall zap shutdown reboot poweroff halt signal unset"
)
"""Verbs that destroy whatever they take: no object needs to be named in a purpose."""
_REPLACES = _words(
    "install reinstall upgrade copy cp move mv rename extract unpack uncompress decompress "
    "patch restore switch checkout pull merge restart umount unmount pause suspend "
    "hibernate disconnect logout execute exec run detach launch spawn invoke"
)
"""Verbs of writing that may overwrite what is there or put something out of service —
destructive as "not additive" (MCP's `destructiveHint`): copying onto an existing name,
installing over installed files, restarting a service, running a caller's command."""
_OPTION_DESTROYS = _words("overwrite clobber shred wipe kill")
"""... and in an option's description, where "terminate entries with NUL" and "clear
decoration filters" destroy nothing, the verbs that only ever act on data or processes
("any existing command is killed")."""
_REMOVES = _words(
    "delete remove rm del drop clean cleanup clear discard unlink reset flush revoke replace "
    "evict stop expire unregister deregister deinit vacuum rewrite"
)
"""Verbs that destroy what they are applied to: destructive when that is something stored
(`_STORED`) — "remove files", not "remove sections from each line"; "rewrites all
configuration files" replaces what they held."""
_OPTION_REMOVES = (_REMOVES | _words("erase destroy purge prune uninstall truncate")) - {"stop"}
"""The verbs of removal an option's description is read for, with a stored object ("clear
the ring buffer"): not stopping or terminating ("stop reading commits", "terminate entries
with NUL")."""
_STORED = _words(
    "file files directory directories dir dirs folder folders data archive archives "
    "destination destinations existing link links symlink "
    "symlinks branch branches tag tags commit commits stash stashes repository "
    "repositories repo container containers image images volume volumes package packages "
    "key keys partition partitions disk disks filesystem filesystems record "
    "records database databases table tables user users group groups account accounts "
    "process processes job jobs unit units service services route routes address "
    "addresses rule rules tree trees worktree worktrees changes modifications content "
    "contents session sessions snapshot snapshots cache caches ref refs reference "
    "references object objects entry entries buffer buffers url urls note notes variable "
    "variables credential credentials token tokens"
)
_WRITES = _words(
    "write create make mkdir install copy cp move mv rename touch save edit update "
    "upgrade modify set change add commit init initialize apply extract compress "
    "decompress uncompress link ln mount umount unmount start enable disable restart "
    "reload push merge rebase tag mark configure import load unload build compile archive "
    "pack unpack split encrypt decrypt sign append insert upload download pull "
    "clone checkout switch register attach detach assign allocate lock unlock grant chmod "
    "chown chgrp patch restore revert amend stage generate convert send "
    "record reinitialize repair fix manage manipulate adjust rotate trigger enforce resume "
    "control administer tune activate deactivate"
)
"""Verbs that make or change something: not necessarily destroying it."""
_OPTION_WRITES = _words(
    "write create save store edit modify install copy move rename extract touch make "
    "mkdir overwrite output place dump export log"
)
"""The verbs of writing that an option's description is read for: those that put
something on disk ("write result to FILE", "make parent directories"), not those that
merely sound like it ("merge already sorted files", "set output width")."""
_READS = _words(
    "list show display print report query search find grep check verify validate test "
    "compare count view describe inspect dump concatenate output locate identify "
    "determine explain summarize calculate compute estimate watch monitor browse examine "
    "lookup look read measure peek retrieve"
)
"""Verbs of commands that look: read-only when nothing says otherwise. `retrieve`, like
the other verbs of fetching, forbids the claim where its clause names the network
(`_from_network`): "Retrieve diagnostics data on a reporter" only reads."""
_READ_NAMES = _READS | _words(
    "ls cat diff info status stat stats log logs help version which whoami blame shortlog get"
)
"""... and the names of such commands, which need not be verbs (`git log`, `status`). `get`
looks in a name (`get-property`), not in a text: "get the keyring from a URI" fetches."""

_NETWORK = _words(
    "download upload fetch pull push clone http https url urls remote remotes server "
    "servers connect network internet web ftp ssh mirror mirrors publish deploy transfer "
    "mail proxy dns uri uris"
)
_FLAG_DESTROYS = _words(
    "delete remove rm purge prune erase destroy uninstall unlink drop discard flush revoke "
    "evict truncate overwrite clobber shred wipe kill vacuum"
)
"""Verbs an option's own name may carry that make the command destroy when it is given
(`find -delete`, `ss --kill`, `journalctl --vacuum-size`, `tar --remove-files`)."""
_NOT_FLAG = _words("no not dont without keep skip dry")
_FLAG_OUTPUTS = _words("out output outfile logfile")
"""Words of an option's name that say where its command writes: `-out` ("Filename to
output to"), `--output-file`."""
_NAMES_FILE = _words("file filename files path directory dir")
"""The first word of a flag that asks for the opposite: `--no-delete`, `--keep-files`."""
_RUNS = _words("shell-command command-line commandline")
"""Operands that are a command line the command runs (`tmux new-session [shell-command]`):
what it runs, it may do."""
_RUNS_WITH_ARGUMENTS = _words("command cmd program")
_ARGUMENTS = _words("arg args argument arguments option options")
"""What follows a program among the operands: `program [argument...]`."""
_RUNNERS = _words("execute exec run invoke spawn launch")
"""Verbs that, with a command as their object, say it is run: "Optionally execute a
command for each device" in the rest of a paragraph (`dmsetup ls --exec`)."""
_RUN_OBJECTS = _RUNS_WITH_ARGUMENTS | _RUNS | _words("command-string")
"""What a verb of running runs when it is a command: "execute a command-string"."""
_DESTINATIONS = _words("output outfile out dest destination target outdir")
"""Operands a command writes to (`uniq [INPUT [OUTPUT]]`, `ln TARGET`): no claim of
safety for a command that takes one."""
"""... and those that are when arguments follow them (`timeout DURATION COMMAND [ARG]...`,
`ip netns exec NAME cmd ...`): `dpkg-query [option...] command` names its own actions."""
_PREDICATES = _words("is has was")
"""A name that asks (`is-active`, `has-changes`, `was-enabled`) only looks."""
_STOPS = _words("from of in into to with on at for by after before when if while than as")
"""Words that end the object of a verb: "remove sections from each line of files"."""
_TARGETS = _words("to into in")
"""... except where a verb of writing names its target: "write result to FILE"."""
_JOINS = _words("or and but then not t never also it they will can may must should shall")
"""Words after which a verb follows: "print or set the system date", "don't delete", "it
updates the package cache", "this command will load unit files"."""
_CLAUSE = frozenset(",;:.")
_SHOWN = _words("output listing display shown")
_PRINTED = _words(
    "text line lines column columns field fields character characters byte bytes word "
    "words number numbers string strings tab tabs space spaces whitespace"
)
"""Pieces of the text a command reads and prints: a verb that acts on them changes no
stored thing ("merge lines of files", "convert tabs to spaces", "truncate text in the
columns")."""
"""Words of an option that acts on what is shown, not on what is stored."""
_NAMES_OR_TEXT = _PRINTED | _words("name names pathname pathnames output")
"""What a removal may take its object out of that is no stored thing: "Remove first N
entries from source file path names"."""
_PASSIVE = _words("is are be been was were get gets")
_NEGATIONS = _words("not never")
_COORDINATES = _words("and or")
_DENIES = _NEGATIONS | {"t"}
"""Words that deny the verb after them ("does not actually trigger a measurement",
"doesn't commit any outstanding changes"): a change a page says is not made is none."""
_FETCHES = _words("get retrieve obtain fetch download")
"""Verbs of fetching: with the network in their clause ("get the archive keyring from a
URI"), what is fetched is kept or acted on, and no claim of safety is made."""
_SETS = _words("set change modify adjust configure tune control manage enable disable")
"""Verbs of setting: what they act on is changed in place, never a result shown ("set
tabs on a terminal")."""
_FOLLOWS_HEAD = (
    _STOPS
    | _JOINS
    | _words("within across between without per via through over under around onto")
    | _words("that which where whose when")
)
"""Words that may follow the last noun of a phrase: prepositions, conjunctions and
relative words; any other word after a noun makes it a qualifier ("a line discipline")."""
_PRINTED_WINDOW = 2
"""Words after a verb that may name the printed text it acts on: "extract gettext
strings"."""
_UNTIL_WINDOW = 3
"""Words between `until` and the verb that ends a run: "until it is killed"."""
_OBJECT_WINDOW = 4
"""Words between a verb of removal and its object: "removes the oldest archived journal
files" (articles not counted)."""
_WRITE_WINDOW = 3
"""... and a verb of writing in an option's description: "write result to FILE", not
"move code around across files"."""
_FILES = _words("file files directory directories dir dirs folder folders archive archives")
"""What an option writes, when it writes: "write result to FILE", "make parent
directories" (not "create a bare repository", which its command's purpose says)."""
_FILE_QUALIFIED = _words(
    "descriptor descriptors system systems type types mode modes size sizes "
    "format formats handle handles pattern patterns permission permissions attribute "
    "attributes count counts"
)
"""Nouns a word for a file may qualify: "file descriptor", "file mode" (not "name": "to
file NAME" names one)."""
_BOOKKEEPING = _words("cache caches history")
"""What an option may write that is no effect of the command: "store the cache data in
<dir>"."""
_NOMINAL = (
    ("ification", ("ify",)),
    ("ation", ("ate", "e", "")),
    ("ment", ("e", "")),
    ("ion", ("", "e")),
)
_CONVERTS = _words("convert translate transform encode decode")
"""Verbs that turn a text into another: what they make is shown where the page sends the
result to standard output (`_converts_only`)."""
_WHEN = _words("when after once if before at on")
"""Words after "Stop" that say when a run stops, not what is stopped."""
_PLAIN_ADVERBS = _words("just still even always often")
"""Adverbs without `-ly` before a verb: "Just show the contents" shows."""
_LOADS = _words("load")
"""A verb of writing that, with a file as its object and no target, reads the file:
"This command will load unit files and print warnings" (not "Loads table_file into the
inactive table slot")."""
_PRONOUNS = _words("them it")
_ARTICLES = _words("the a an each every all any its their this that these those")
_TOKEN = re.compile(
    r"(?<![\w/])(?:~|\.\.?|\.[\w-]+)?(?:/[\w.-]*[\w-])+/?"
    r"|[a-z]+(?:[-.][a-z0-9]+)*|[^\sa-z]"
)
"""Words (hyphenated ones whole: "NUL-terminated" is no verb; dotted ones too: "a
magic.mgc output file" names one file, its dot ends no sentence), paths
(`.git/lost-found/`, `/etc/hosts`: a file, no end of sentence; not "and/or") and
punctuation."""
_FLAG = re.compile(r"(?<![\w-])--?[a-z0-9][\w-]*(?:=\S*)?")
"""A flag written in a text ("--vacuum-size= removes ...", "With -d, also delete"): the
word after it starts a clause."""
_FLAG_ANY_CASE = re.compile(_FLAG.pattern, re.IGNORECASE)
_REFERENCE = re.compile(r"(?<![\w.-])[\w.-]+\([0-9][a-z0-9]*\)", re.IGNORECASE)
"""A reference to a page, `kill(2)`, `sigqueue(3)`: a name, no verb ("Use sigqueue(3)
rather than kill(2)" kills nothing)."""
_ONTO = _words("to into onto on")
"""Words before where a result goes: "to standard output", "on the standard output"."""
_SUBJECTS = _words("utility command program tool")
_PEOPLE = _words("you user users")
"""Subjects that are the user, not the command: what they run, the command does not."""
"""What a page calls the command it describes: "The rev utility copies ..."."""
_DEICTIC = _words("this the")
_BREAKS = frozenset("()")
"""Brackets: the word after one starts a clause ("(alias: source) Execute commands")."""


class _Said(msgspec.Struct, frozen=True):
    """What one text says: that something is destroyed, written or only read."""

    destroys: bool = False
    writes: bool = False
    reads: bool = False
    network: bool = False
    fetches: bool = False


def infer_effects(
    name: str,
    purpose: str,
    options: Iterable[str] = (),
    *,
    flags: Iterable[Sequence[str]] = (),
    operands: Iterable[str] = (),
    prose: str = "",
) -> Effects:
    """The effects of a command named `name` whose documentation says `purpose`, whose
    options are described by `options` and spelled `flags` (the flags of each, in the
    same order), whose operands are named `operands`, and whose page's description
    starts with `prose`. (A denied command's claim of destruction is made on the shim,
    by `generate.claim_destruction`.)"""
    options, flags = list(options), [list(f) for f in flags]
    named = _from_name(name)
    first, rest = _first_sentence(purpose)
    # "save routing table information to stdout": what goes to standard output is shown,
    # and a name that writes (`save`) writes there; so is what a purpose converts, no
    # stored thing, where the page's description says, unconditionally, that its result
    # goes to standard output ("convert a termcap description ...": "an equivalent
    # terminfo description is written to standard output")
    always = _sends_to_standard_output(prose, always=True)
    printed = _to_standard_output(first) or (always and _converts_only(first))
    said = _from_text(first, to_stdout=printed)
    if printed and said.reads and not said.writes:
        named = msgspec.structs.replace(named, writes=False)
    # a purpose that looks and names the name's verb as a thing ("Find as good common
    # ancestors as possible for a merge": `merge-base`) says the name is a noun
    if said.reads and not (said.writes or said.destroys) and _named_as_noun(name, first):
        named = msgspec.structs.replace(named, writes=False, destroys=False)
    # the page's description, read for its first sentence: what it does with its result
    # ("Print selected parts of lines from each FILE to standard output"), and what it
    # converts where the page sends the result there
    opening = _opening(name, prose)
    shows = _to_standard_output(opening) or (always and _converts_only(opening))
    described = _from_text(opening, to_stdout=shows) if opening else _Said()
    # a purpose without a verb is read by its nouns ("Generation of hashed passwords");
    # where the page's description says in a verb that it only looks ("This command
    # computes the hash of a password"), that verb is the better evidence
    if (
        said.writes
        and not said.destroys
        and not _from_text(first, to_stdout=printed, nominal=False).writes
        and described.reads
        and not (described.writes or described.destroys or described.fetches)
    ):
        said = msgspec.structs.replace(said, writes=False, reads=True)
    # the rest of a purpose is read as strictly as an option: it often describes options
    # ("If -d is specified, any other clients ... are detached")
    later = _from_text(rest, option=True) if rest else _Said()
    # ... and as loosely as a purpose, for the changes that forbid a claim of safety: "If
    # no argument is given, print the hostname. Otherwise, change it"
    changes = _changes(rest)
    spellings = [*flags, *[[] for _ in options]]
    # an option that overwrites what its own name names sets a value of the run ("-S,
    # --size: overwrite device size"), no stored thing
    optional = [
        _from_text(text, option=True) if not _overrides(spelled, text) else _Said()
        for text, spelled in zip(options, spellings, strict=False)
    ]
    # a usage line names the command itself among its words (`terraform [global options]
    # output [options] [NAME]`): its own name is no operand, let alone a destination
    operands = [o for o in map(_operand, operands) if o != name.lower()]
    # a command run by the command, named among its operands, in the rest of its purpose,
    # in its page's opening ("The logsave program will execute cmd_prog") or by what an
    # option does first ("-c: Execute a command-string in an environment ...")
    runs = (
        _runs(operands)
        or _runs_in(rest)
        or _runs_in(opening)
        or any(_runs_in(_first_sentence(text)[0]) for text in options)
    )
    destined = any(_destination(o) for o in operands)
    # an option named for destroying (`-delete`, `--vacuum-size`) destroys when what it
    # says agrees or it says nothing; else it is a doubt (`--kill-stop`: "Stop the
    # processes"), unless its text says it destroys nothing (`_harmless`)
    named_for = [
        _destroying(text) or not text.strip()
        for spelled, text in zip(flags, [*options, *[""] * len(flags)], strict=False)
        if any(_flag_destroys(f) for f in spelled)
        and not (_harmless(text) or _overrides(spelled, text))
    ]
    outputs = any(
        _flag_outputs(f) and _names_a_file(_first_sentence(text)[0])
        for spelled, text in zip(flags, options, strict=False)
        for f in spelled
    )
    # an option named for setting whose text sets (`--settimeout`: "Set the watchdog
    # timeout in seconds") changes what the command otherwise shows
    sets = any(
        _flag_sets(f) and _sets(text)
        for spelled, text in zip(flags, options, strict=False)
        for f in spelled
    )
    # the page's description is read for what shows, never against it: a wordier text
    # than a NAME line, its nouns ("the files (or links)") look like verbs too often
    filters = described.reads or _sends_to_standard_output(prose)
    shown = filters and not (described.writes or described.destroys or described.fetches)
    looks = named.reads or said.reads or shown
    # a NAME line that removes without saying what ("remove certain IPC resources") is
    # read with its description's first sentence, which names what is removed ("removes
    # ... IPC objects and associated data structures from the system")
    removed = _destroying(first) and _removes_stored(opening)
    destroys = (
        removed
        or named.destroys
        or said.destroys
        or later.destroys
        or any(o.destroys for o in optional)
        or any(named_for)
        # a runner destroys, unless it only looks otherwise (`dmsetup ls --exec`: a
        # helper's run, perhaps); one that also changes (`dpkg-architecture`: "set and
        # determine", and `-c` runs a command) is no looking command
        or (runs and not (looks and not (named.writes or said.writes)))
    )
    writes = destroys or named.writes or said.writes or outputs or any(o.writes for o in optional)
    network = named.network or said.network or any(o.network for o in optional)
    doubt = (  # no claim of its own, but no claim of safety either
        runs
        or _conditional(first)
        or sets
        or later.writes
        or changes
        or destined
        or bool(named_for)
        or said.fetches
        or later.fetches
    )
    read_only = not writes and not doubt and looks
    if read_only:
        return Effects(filesystem=FilesystemEffects(write=False, delete=False))
    if not (writes or network):
        return Effects()
    return Effects(
        filesystem=FilesystemEffects(write=True, delete=True if destroys else UNSET)
        if writes
        else UNSET,
        network=True if network else UNSET,
        destructive=True if destroys else UNSET,
    )


def _opening(name: str, prose: str) -> str:
    """The first sentence of a page's description, its subject ("The rev utility copies
    ...", "locale displays ...") left out so that its verb starts it. It is read (with
    `_from_text`) for what shows: where its result goes to standard output and to no
    file, a verb of writing shows ("Write lines ... to standard output", "copies the
    specified files to standard output"): what is printed changes nothing stored."""
    first = _first_sentence(prose)[0]
    subject = rf"(?i)^\s*(?:the\s+)?{re.escape(name)}(?:\s+(?:{'|'.join(_SUBJECTS)}))?\s+"
    return re.sub(subject, "", first, count=1)


_CONDITION = re.compile(r"(?:if|when)\b[^,.;:]*", re.IGNORECASE)
"""The leading condition of a sentence, up to its first comma: "if"/"when", not "with
no" or "without", which name a default ("Without any parameter, this command outputs
..." limits its output with one)."""
_OMITTED = _words("no not")
_OPERAND_WORDS = _words(
    "given specified passed provided supplied argument arguments parameter parameters "
    "operand operands"
)


def _conditional(first: str) -> bool:
    """Whether what the first sentence says holds only when an operand is left out ("If
    the LEVEL argument is not given, print the current log level", "If no argument is
    given, ..."): given one, the command does what its purpose does not say, so what it
    says is no evidence of safety. Not a condition on a state ("When the unit is not
    running")."""
    condition = _CONDITION.match(first.strip())
    if condition is None:
        return False
    words = set(re.findall(r"[a-z]+", condition.group().lower()))
    return bool(words & _OMITTED) and bool(words & _OPERAND_WORDS)


def _sends_to_standard_output(prose: str, *, always: bool = False) -> bool:
    """Whether a sentence of a page's description says that the result goes to standard
    output and nowhere else, whatever its verb ("col reads from standard input and
    writes to standard output", "Output is sent to standard output", "All the results are
    printed on the standard output"): a filter's page says so after its first sentence,
    and often with no verb of looking. With `always`, not in a sentence that says when
    ("If no files are specified, ... the standard input is compressed to the standard
    output")."""
    return any(
        _to_standard_output(sentence)
        and not (always and _CONDITION.match(sentence.strip()))
        and not (said := _from_text(sentence, to_stdout=True)).destroys
        and not said.fetches
        for sentence in re.split(r"(?<=[.!?])\s+", prose)
    )


def _converts_only(text: str) -> bool:
    """Whether `text` converts something that is not stored ("convert a termcap
    description into a terminfo description", "convert encoding of input files") and
    has no other verb of writing: not "create Sources index files", "compress or expand
    files", "set tabs on a terminal", "creates a tree object", "optionally writes the
    resulting object into the object database", "extract from archives"."""
    words = [m.group() for m in _TOKEN.finditer(text.lower()) if m.group() not in _BREAKS]
    converts = False
    for index, word in enumerate(words):
        forms = _lemma(word)
        if forms & (_REPLACES | _REMOVES | _DESTROYS):
            return False
        if forms & _CONVERTS:
            if _stored_object(words, index, _STOPS, False):
                return False
            converts = True
        elif forms & _WRITES:
            return False
    return converts


def _overrides(flags: Sequence[str], text: str) -> bool:
    """Whether an option's verb of destroying acts on what the option's own long name
    names, which is no stored thing: "-S, --size size: overwrite device size",
    "--prune-allowlist: Overwrite the default allowlist": the option sets a value the
    command would otherwise take; not "--remove-files: remove files after adding them"."""
    own = {w for f in flags if f.startswith("--") for w in re.findall(r"[a-z]+", f.lower())}
    words = [m.group() for m in _TOKEN.finditer(_first_sentence(text)[0].lower())]
    for index, word in enumerate(words):
        if not _lemma(word) & _AGREES:
            continue
        for after in itertools.islice(_after(words, index), _OBJECT_WINDOW + 1):
            if after in _STOPS or after in _CLAUSE or _is_stored(after):
                return False
            if after in own and len(after) > 2:
                return True
        return False
    return False


def _removes_stored(text: str) -> bool:
    """Whether a verb of removal leads `text` and a stored thing is in its clause, however
    far ("removes System V inter-process communication (IPC) objects ... from the
    system"): read only where the NAME line has said that the command removes."""
    words = [m.group() for m in _TOKEN.finditer(text.lower()) if m.group() not in _BREAKS]
    if not words or not _lemma(words[0]) & _AGREES:
        return False
    for word in words[1:]:
        if word in _STOPS or word in _CLAUSE:
            return False
        if _is_stored(word):
            return True
    return False


def _to_standard_output(text: str) -> bool:
    """Whether `text` sends its result to standard output and to nothing else: "to
    standard output", "on the standard output", "to stdout"; not "Copy standard input to
    each FILE, and also to standard output"."""
    words = [m.group() for m in _TOKEN.finditer(text.lower())]
    shown = stored = False
    for index, word in enumerate(words):
        if word not in _ONTO:
            continue
        target = [w for w in words[index + 1 : index + 4] if w not in _ARTICLES]
        if target[:2] == ["standard", "output"] or target[:1] == ["stdout"]:
            shown = True
        elif target and word != "on" and _is_stored(target[0]):  # "in each FILE": a source
            stored = True
    return shown and not stored


def _first_sentence(text: str) -> tuple[str, str]:
    """What a command is for is said first, and the rest of a page's paragraph explains
    it ("... Returns an exit code of 0 if at least one is enabled"): the first sentence
    and the rest."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z(\"'])", text.strip(), maxsplit=1)
    return parts[0], parts[1] if len(parts) > 1 else ""


def _changes(text: str) -> bool:
    """Whether a sentence of `text` that is not about what is shown ("This function is
    intended to generate human-readable output") starts a clause with a verb of changing
    ("Otherwise, it changes the hostname")."""
    sentences = re.split(r"(?<=[.!?])\s+", text)
    return any(
        _from_text(s, nominal=False).writes
        for s in sentences
        if not any(w in _SHOWN for w in re.findall(r"[a-z]+", s.lower()))
    )


def _flag_destroys(flag: str) -> bool:
    """Whether an option's name says that it destroys: `-delete`, `--kill`,
    `--vacuum-size`, `--remove-files`; not `--no-delete`, `--keep-files` or a letter."""
    words = re.findall(r"[a-z]+", flag.lower())
    if len(flag.lstrip("-")) < 2 or not words or words[0] in _NOT_FLAG:
        return False
    return any(word in _FLAG_DESTROYS for word in words)


def _flag_outputs(flag: str) -> bool:
    """Whether an option's name says it is where the output goes: `-out`, `--output`,
    `--output-file`, `--log-file` (not `--no-output`)."""
    words = re.findall(r"[a-z]+", flag.lower())
    if not words or words[0] in _NOT_FLAG:
        return False
    return bool(set(words) & _FLAG_OUTPUTS) or words[-2:] == ["log", "file"]


def _flag_sets(flag: str) -> bool:
    """Whether an option's name starts with `set`: `--set-property`, `--settimeout`,
    `-setalias` (not `--no-set`, a letter, or `--setup`, whose text must also set)."""
    words = re.findall(r"[a-z]+", flag.lower())
    return len(flag.lstrip("-")) > 3 and bool(words) and words[0].startswith("set")


def _sets(text: str) -> bool:
    """Whether an option's text starts with a verb of setting: "Set the watchdog
    timeout in seconds", "Changes the ..."."""
    words = re.findall(r"[a-z]+", text.lower())
    return bool(words) and bool(_lemma(words[0]) & _SETS)


def _names_a_file(text: str) -> bool:
    """Whether the first sentence of an option's text names a file: "Use outputfile for
    output", "Filename to output to"; not jq's `--color-output`, "By default, jq outputs
    colored JSON if writing to a terminal. You can force it ... writing to a pipe or a
    file"."""
    return any(w in _NAMES_FILE or _is_file(w) for w in re.findall(r"[a-z]+", text.lower()))


def _destroying(text: str) -> bool:
    """Whether a verb of destroying or removal stands anywhere in `text` (not "stop":
    "Stop when a given path disappears")."""
    return any(_lemma(w) & _AGREES for w in re.findall(r"[a-z]+", text.lower()))


def _harmless(text: str) -> bool:
    """Whether an option named for destroying says that it does not: its text first looks
    (`--discard`: "print discard capabilities") or acts on printed text only
    (`--table-truncate`: "truncate text in the columns when necessary"), or says when
    the command's own run stops and removes nothing (`--remove-empty`: "Stop when a
    given path disappears from the tree"; not "Stop the processes")."""
    said = _from_text(_first_sentence(text)[0])
    if said.reads and not said.writes and not said.destroys:
        return True
    words = [m.group() for m in _TOKEN.finditer(text.lower())]
    verbs = [i for i, w in enumerate(words) if _lemma(w) & _AGREES]
    if not verbs and words[:1] == ["stop"] and words[1:2] and words[1] in _WHEN:
        return True
    return bool(verbs) and all(
        _stored_object(words, i, _STOPS, False, things=_PRINTED) or _printed_subject(words, i)
        for i in verbs
    )


def _printed_subject(words: Sequence[str], verb: int) -> bool:
    """Whether a passive verb's subject is printed text: "where text can be truncated"."""
    if not verb or words[verb - 1] not in _PASSIVE:
        return False
    before = words[max(0, verb - _OBJECT_WINDOW) : verb]
    return any(w in _PRINTED for w in before) and not any(_is_stored(w) for w in before)


def _operand(name: str) -> str:
    """An operand's name as a word, `...` kept: `<command>`, `[COMMAND...]`."""
    return name.lower().strip("<>[]{} ").replace("…", "...")


def _destination(operand: str) -> bool:
    """Whether an operand is where the command writes: `OUTPUT`, `outfile`, and a name
    of several words that holds one (`[INPUT [OUTPUT]]`, read as `input-output`)."""
    words = re.findall(r"[a-z]+", operand)
    if words[-1:] in (["option"], ["options"]):  # `[output-option]`: flags, no file
        return False
    return any(word in _DESTINATIONS for word in words)


def _runs(operands: Sequence[str]) -> bool:
    """Whether the operands are a command line to run: a shell command, a command with
    its arguments after it (`COMMAND [ARG]...`, `cmd ...`), or an operand followed by its
    own options (`FILTER [FILTER-OPTION]`)."""
    for index, operand in enumerate(operands):
        word = operand.rstrip(".")
        if word in _RUNS:
            return True
        if word in _RUNS_WITH_ARGUMENTS and (operand != word or index < len(operands) - 1):
            return True
        # `program [argument...]`, read as one operand `program-argument...`
        head, _, tail = word.partition("-")
        if head in _RUNS_WITH_ARGUMENTS and tail in _ARGUMENTS:
            return True
        # `FILTER [FILTER-OPTION]`, `EXECUTABLE [EXECUTABLE-OPTION...]`: an operand that
        # takes options of its own is a program
        following = operands[index + 1].rstrip(".") if index + 1 < len(operands) else ""
        if following.partition("-")[::2] in {(word, a) for a in _ARGUMENTS}:
            return True
    return False


def _runs_in(text: str) -> bool:
    """Whether `text` says that a command is run: a verb of running with a command as its
    object ("Optionally execute a command for each device", "runs the given program",
    "Execute a command-string in an environment ..."); not by the user ("the executable
    that pyenv will invoke when you run the given command")."""
    words = [m.group() for m in _TOKEN.finditer(text.lower())]
    return any(
        _lemma(word) & _RUNNERS
        and _stored_object(words, index, _STOPS, False, things=_RUN_OBJECTS)
        and not (index and words[index - 1] in _PEOPLE)  # "when you run the given command"
        for index, word in enumerate(words)
    )


def _from_name(name: str) -> _Said:
    """A command's name is a verb (`list-units`, `reset-failed`, `rmi`, `autoremove`): its
    first word says what it does (`verify-tag` verifies), and a word that is or starts or
    ends with a verb of destruction says that it destroys. A first word that only starts
    with a verb of writing (`mkdir`) is a noun where a later word looks (`buildid-list`
    lists build ids: `build` is no verb of it)."""
    words = re.findall(r"[a-z]+", name.lower())
    if not words:
        return _Said()
    first = _lemma(words[0])
    # `is-system-running` asks whether it runs; `debian-installed` names a state, a
    # participle after words that are no verbs (a verb inflected: `disk-shred` is not)
    asks = bool(first & _PREDICATES) or (
        len(words) > 1
        and words[-1].endswith("ed")
        and bool(_lemma(words[-1]) & _VERBS - {words[-1]})
        and not any(_lemma(word) & _VERBS for word in words[:-1])
    )
    compound = _starts_with(words[0], _WRITES) and not any(
        _lemma(word) & _READ_NAMES for word in words[1:]
    )
    return _Said(
        destroys=not asks and any(_destroys(word) for word in words),
        writes=bool(first & _WRITES) or compound,
        reads=asks or bool(first & _READ_NAMES),
        network=any(_lemma(word) & _NETWORK for word in words),
    )


def _named_as_noun(name: str, text: str) -> bool:
    """Whether a name's first word, a verb, stands in `text` as a noun after an article
    ("for a merge", "for a patch") and the rest of the name neither writes nor destroys:
    `merge-base` names the base of a merge, `patch-id` the id of a patch."""
    words = re.findall(r"[a-z]+", name.lower())
    if len(words) < 2 or not _lemma(words[0]) & _VERBS:
        return False
    rest = _from_name("-".join(words[1:]))
    if rest.writes or rest.destroys:
        return False
    said = [m.group() for m in _TOKEN.finditer(text.lower())]
    return any(
        word == words[0] and said[index - 1] in _NOUN_ARTICLES
        for index, word in enumerate(said)
        if index
    )


_NOUN_ARTICLES = _words("a an")
"""Articles before a noun only: "the" also stands before a verb's object, never before
the verb ("the patch" could be either; "a patch" is a thing)."""

_DESTROYS_ANY = _DESTROYS | _REMOVES | _REPLACES
_AGREES = _DESTROYS | _OPTION_REMOVES
"""The verbs of a name that destroys (`rmi`, `autoremove`): computed once, not per word."""


def _destroys(word: str) -> bool:
    if _lemma(word) & _DESTROYS_ANY:
        return True
    return _starts_with(word, _DESTROYS_ANY) or any(
        word.endswith(verb) for verb in _DESTROYS_ANY if len(verb) >= 4
    )


def _starts_with(word: str, verbs: frozenset[str]) -> bool:
    """`rmdir`, `mkdir`-like compounds: a verb of four letters or more (or `rm`) at the start."""
    return any(word.startswith(v) for v in verbs if len(v) >= 4 or v == "rm")


def _from_text(
    text: str, *, option: bool = False, to_stdout: bool = False, nominal: bool = True
) -> _Said:
    """Evidence in a sentence, read by its verbs: a word that starts a clause or is joined
    to one ("print or set", "keep (don't delete) input files"), not a noun that looks like
    a verb ("show changes", "such as renames"). In an option's description a verb of
    writing counts only with a stored object ("write result to FILE"; not "set output
    width"), and a removal from what is shown is none ("discard the files ... from the
    output"). With `to_stdout`, the text's result goes to standard output: its verbs of
    writing and replacing show it. With `nominal`, a text without verbs is read by its
    nouns ("Speed Measurement"): a purpose, not a later sentence ("and --global for the
    global configuration" configures nothing)."""
    destroys = writes = reads = network = fetches = False
    words: list[str] = []
    leads: list[bool] = []
    joins = _JOINS if option else _JOINS | {"to"}  # "a tool to query the database"
    removes = _OPTION_REMOVES if option else _REMOVES | _DESTROYS
    broken = False  # a bracket or a flag came before the word
    opened = False  # ... an opening parenthesis: "(Link Layer Discovery Protocol)"
    source = _FLAG_ANY_CASE.sub(" ( ", _REFERENCE.sub(" ", text))
    for match in _TOKEN.finditer(source.lower()):
        word = match.group()
        if not word[0].isalpha() and not _is_path(word):
            if word in ",;:.":
                words.append(word)
                leads.append(False)
            broken = broken or word in _BREAKS
            opened = word == "("
            continue
        leads.append(
            (
                not words
                or broken
                or words[-1] in _CLAUSE
                or words[-1] in joins
                or (leads[-1] and _adverb(words[-1]))  # "and optionally creates a blob"
                or _subject(words)  # "This command prints a list"
            )
            and not _capitals(source[match.start() : match.end()])
            and not (
                opened
                and words
                and _titled(source[match.start() : match.end()])
                and not _lemma(word) & _DESTROYS_ANY  # "(Delete ...)" still destroys
            )
        )
        broken = opened = False
        words.append(word)
    first = words.index(".") if "." in words else len(words)
    shown, stored_before = _sentences(words)
    if "in-place" in words or ("in", "place") in itertools.pairwise(words):
        destroys = True  # "edit files in place": what was there is overwritten
    bookkeeping = any(w in _BOOKKEEPING for w in words[:first])
    looking = False  # the sentence's first verb is one of looking: "Show files that ..."
    looking_verb = ""  # ... that verb, as written
    verb_seen = False
    for index, word in enumerate(words):
        if word == ".":
            looking = verb_seen = False
            continue
        forms = _lemma(word)
        if forms & _NETWORK and not option:  # an option's mention of a server is no use
            network = True
        if looking and _listed(words, index, looking_verb, stored_before[index]):
            continue  # "Show interfaces, methods, properties and signals": a noun
        if forms & (_OPTION_DESTROYS if option else _DESTROYS) and not _ends_run(words, index):
            destroys = True
        before = index - 1 - (index > 1 and words[index - 1] in _NEGATIONS)
        passive = index > 0 and words[before] in _PASSIVE  # "it is (not) truncated"
        # "the unit is active or started": one predicate, a state
        passive = passive or (
            index > 2 and words[index - 1] in _COORDINATES and words[index - 3] in _PASSIVE
        )
        if not (leads[index] or passive):
            continue
        if passive and not forms & removes:  # a state ("units are enabled"), not an act
            continue
        if passive and option and looking:  # "Show files that need to be removed"
            continue
        if word.endswith("ing") and _ends_clause(words, index):  # "(i.e. running)": a state
            continue
        if (
            word.endswith("ed")
            and _by_agent(words, index)
            and not forms & (removes | _DESTROYS | _REPLACES)
        ):
            continue  # "perf.data (created by perf record)": what another made
        if (
            verb_seen
            and not option
            and words[index - 1] == "to"
            and not forms & (removes | _DESTROYS | _REPLACES)
        ):
            continue  # "ordered by the time they took to initialize": not what it does
        if leads[index] and not verb_seen and forms & _VERBS:
            verb_seen, looking, looking_verb = True, bool(forms & _READS), word
        if leads[index] and forms & _FETCHES and _from_network(words, index):
            fetches = True
        if _denied(words, index) and not forms & (removes | _DESTROYS | _REPLACES):
            continue  # "does not actually trigger a measurement": no change is made
        if to_stdout and forms & (_WRITES | _REPLACES) and not forms & _DESTROYS:
            reads = True  # "Write lines ... to standard output"
            continue
        if forms & (_WRITES | _REPLACES) and _on_printed(words, index):
            # "merge lines of files", "detect copied lines": stdout's text; a purpose
            # that turns text into text shows it ("Convert numbers from/to human-readable
            # strings"), unless its clause puts it in a file ("copy lines to FILE")
            shows = not (option or forms & _SETS) and leads[index]
            shows = shows and not _into_stored(words, index)
            reads = reads or shows
            continue
        if not option and forms & _REPLACES:
            destroys = True
        elif forms & removes and _stored_object(words, index, _STOPS, stored_before[index]):
            if not destroys and not _from_names(words, index):
                destroys = not (option and shown[index])
        elif option and forms & _OPTION_WRITES and index < first:  # what it does, not prose
            writes = writes or (not bookkeeping and _writes_file(words, index))
        elif not option and forms & _LOADS and _loads_file(words, index):
            continue
        elif not option and forms & _WRITES:
            writes = True
        elif not option and forms & _READS:
            reads = True
    if nominal and not (option or destroys or writes or reads):  # "Speed Measurement"
        nouns = {v for w in words for v in _verb_of(w)}
        writes = bool(nouns & (_WRITES | _DESTROYS_ANY))
        reads = not writes and bool(nouns & _READS)
    return _Said(destroys=destroys, writes=writes, reads=reads, network=network, fetches=fetches)


_VERBS = _READS | _WRITES | _REMOVES | _DESTROYS | _REPLACES
"""Every verb the reader knows: the first of a sentence says what it is about."""


def _on_printed(words: Sequence[str], verb: int) -> bool:
    """Whether the verb's object is printed text, next to it or after one word that
    qualifies it ("merge lines", "extract gettext strings"); not when a stored thing
    comes first ("copy files' lines") or a command ("execute command lines" runs them)."""
    for index in range(verb + 1, min(verb + 1 + _PRINTED_WINDOW, len(words))):
        word = words[index]
        if word in _PRINTED:
            return _heads(words, index)
        if word in _STOPS or word in _CLAUSE or _is_stored(word) or word in _RUNS_WITH_ARGUMENTS:
            return False
    return False


def _from_names(words: Sequence[str], verb: int) -> bool:
    """Whether a verb of removal takes its object out of a name or a text, the head of
    the phrase after `from` in its clause: "Remove first N entries from source file path
    names in executables" (the entries are pieces of the names; not "remove the entry
    from the file", "delete the files from the directory")."""
    source, head = False, ""
    for word in _after(words, verb):  # its clause only: a hostile text is read in linear time
        if word in _CLAUSE or (source and (word in _STOPS or word in _JOINS)):
            break
        if source:
            head = word
        source = source or word == "from"
    return head in _NAMES_OR_TEXT


def _heads(words: Sequence[str], noun: int) -> bool:
    """Whether a noun ends its phrase: nothing follows it but a preposition, a
    conjunction, a relative word or the clause's end ("merge lines of files", "convert
    tabs to spaces", "print lines that match"); not "attach a line discipline", "compile
    word list", where it qualifies the noun after it."""
    after = noun + 1
    if after == len(words) or words[after] in _CLAUSE:
        return True
    return words[after] in _FOLLOWS_HEAD


def _ends_run(words: Sequence[str], verb: int) -> bool:
    """Whether the verb says how the command's own run ends, after `until` ("runs until
    killed", "until it is terminated"): the command is what is destroyed, nothing else."""
    for word in reversed(words[max(0, verb - _UNTIL_WINDOW) : verb]):
        if word in _CLAUSE:
            return False
        if word == "until":
            return True
    return False


def _loads_file(words: Sequence[str], verb: int) -> bool:
    """Whether a verb of loading takes a file as its object, with no target in its clause
    ("load unit files and print warnings", "load the specified files, and ... print
    it"): the file is read."""
    seen, found = 0, False
    for word in _after(words, verb):
        if word in _CLAUSE:
            break
        if word in _TARGETS or word == "onto":
            return False
        if seen < _OBJECT_WINDOW and _is_file(word):
            found = True
        seen += word not in _ARTICLES
    return found


def _into_stored(words: Sequence[str], verb: int) -> bool:
    """Whether the verb's clause puts its result into a stored thing: "to FILE", "into
    the files", "in each file"."""
    target = False
    for word in _after(words, verb):
        if word in _CLAUSE:
            return False
        if word in _TARGETS or word == "onto":
            target = True
        elif target and _is_stored(word):
            return True
    return False


def _subject(words: Sequence[str]) -> bool:
    """Whether the words read so far end with a clause's subject that names the command
    described ("This command prints ...", "The utility reads ...", "then the command
    changes ..."): the verb after it says what the command does."""
    if len(words) < 2 or words[-1] not in _SUBJECTS or words[-2] not in _DEICTIC:
        return False
    # "If LEVEL is provided, then the command changes the current log level"
    return len(words) == 2 or words[-3] in _CLAUSE or words[-3] in _JOINS


def _denied(words: Sequence[str], verb: int) -> bool:
    """Whether the verb is denied: `not`, `never` or `n't` before it, adverbs between
    ("does not actually trigger")."""
    before = verb - 1
    while before >= 0 and _adverb(words[before]):
        before -= 1
    return before >= 0 and words[before] in _DENIES


def _from_network(words: Sequence[str], verb: int) -> bool:
    """Whether the clause of a verb of fetching names the network: "get the archive
    keyring from a URI"."""
    for word in _after(words, verb):
        if word in _CLAUSE:
            return False
        if _lemma(word) & _NETWORK:
            return True
    return False


def _verb_of(noun: str) -> set[str]:
    """The verbs a noun is made from: determination → determine, generation → generate,
    verification → verify, measurement → measure, extraction → extract; and a gerund's,
    viewing → view ("file perusal filter for crt viewing")."""
    if noun.endswith("ing") and len(noun) > 5:
        return set(_lemma(noun))
    for suffix, endings in _NOMINAL:
        if noun.endswith(suffix) and len(noun) > len(suffix) + 2:
            stem = noun[: -len(suffix)]
            return {stem + ending for ending in endings}
    return set()


def _inflection(word: str) -> str:
    """How a verb is inflected: `-s` (shows), `-ed` (configured), `-ing`, or bare (show)."""
    for ending in ("ed", "ing"):
        if word.endswith(ending):
            return ending
    return "s" if word.endswith("s") and not word.endswith("ss") else ""


def _listed(words: Sequence[str], index: int, verb: str, stored_before: bool) -> bool:
    """Whether a word after a comma, `and` or `or` in the sentence of a verb of looking
    is one more of its objects, not a verb joined to it: inflected otherwise than the
    verb ("Show interfaces, methods, properties and signals", "Monitors files ... and
    mount and unmount operations", "Show ... hardware and IP address, configured DNS
    servers"), and with no object of its own — no article, pronoun or stored thing
    after it. A verb joined to another takes its inflection ("Lists and removes"), and
    a sloppy one still has its object ("Show status and kills the jobs")."""
    if not index or (words[index - 1] not in _COORDINATES and words[index - 1] != ","):
        return False
    if _inflection(words[index]) == _inflection(verb):
        return False
    following = words[index + 1] if index + 1 < len(words) else "."
    if following in _ARTICLES or following in _PRONOUNS:
        return False
    return not _stored_object(words, index, _STOPS, stored_before)


def _sentences(words: Sequence[str]) -> tuple[list[bool], list[bool]]:
    """For each word, whether its sentence is about what is shown ("discard the files ...
    from the output"), not what is stored; and whether a stored thing comes before it in
    its sentence ("files ... are discarded"). Worked out once for the text: a scan of
    its sentence for each verb took a hostile --help of many sentences of "remove files"
    quadratic time."""
    sentence: list[int] = []
    stored_before: list[bool] = []
    count, seen = 0, False
    for word in words:
        sentence.append(count)
        stored_before.append(seen)
        seen = word != "." and (seen or _is_stored(word))
        count += word == "."
    about_shown = {sentence[i] for i, word in enumerate(words) if word in _SHOWN}
    return [n in about_shown for n in sentence], stored_before


def _writes_file(words: Sequence[str], verb: int) -> bool:
    """Whether an option's verb of writing puts a file on disk: a file as its near object
    ("make parent directories") or target ("write result to FILE"). "Output" writes only
    to a target: "output merged file with #ifdef" prints it."""
    target = "output" in _lemma(words[verb])  # "Outputs the default directory for ..."
    seen = 0
    for index in range(verb + 1, len(words)):
        word = words[index]
        if word in _TARGETS:
            target = False
            continue
        if word in _STOPS or word in _CLAUSE or seen == _WRITE_WINDOW:
            return False
        if _is_file(word) and not target and not _qualifies(words, index):
            return True
        seen += word not in _ARTICLES
    return False


def _qualifies(words: Sequence[str], noun: int) -> bool:
    """Whether a word that names a file qualifies the noun after it: "dump the file
    descriptor activity" (no file is written)."""
    return noun + 1 < len(words) and words[noun + 1] in _FILE_QUALIFIED


def _stored_object(
    words: Sequence[str],
    verb: int,
    stops: frozenset[str],
    stored_before: bool,
    window: int = _OBJECT_WINDOW,
    things: frozenset[str] | None = None,
) -> bool:
    """Whether a stored thing is what the verb acts on: named in the few words after it
    (articles not counted), before a preposition ends its object — or, for a passive
    ("files ... are discarded"), earlier in its sentence (`stored_before`). `things`, when
    given, are what counts as the object instead of stored things. A pronoun stands for
    a stored thing its sentence named before it ("Instead of displaying the user's
    failure records, clear them")."""
    seen = 0
    for word in _after(words, verb):
        if word in stops or word in _CLAUSE or seen == window:
            break
        if _is_stored(word) if things is None else word in things:
            return True
        if word in _PRONOUNS and stored_before:  # "the failure records ..., clear them"
            return True
        seen += word not in _ARTICLES
    return bool(verb) and words[verb - 1] in _PASSIVE and stored_before


def _titled(word: str) -> bool:
    """A word with a capital first letter inside a sentence, after an opening parenthesis,
    names something ("Show discovered LLDP (Link Layer Discovery Protocol) neighbors"):
    not a verb."""
    return word[:1].isupper() and not word.isupper()


def _capitals(word: str) -> bool:
    """A word in capitals is a value or a placeholder ("State: SUSPENDED|ACTIVE", "FILE"),
    never a verb."""
    return len(word) > 1 and word.isupper()


def _adverb(word: str) -> bool:
    """`optionally`, `only`, `recursively`, `just`: not a verb (`apply`, `supply`)."""
    return word in _PLAIN_ADVERBS or (word.endswith("ly") and not _lemma(word) & _VERBS)


def _by_agent(words: Sequence[str], index: int) -> bool:
    """Whether a past participle names its agent after it ("perf.data (created by perf
    record)", "files captured by the recorder"): it says what something else did to the
    thing, not what the command does."""
    return words[index].endswith("ed") and index + 1 < len(words) and words[index + 1] == "by"


def _ends_clause(words: Sequence[str], index: int) -> bool:
    """Whether nothing follows the word in its clause: "units that are active (i.e.
    running).", "fully up and running, specifically"."""
    after = index + 1
    return after == len(words) or words[after] in _CLAUSE or words[after] in _JOINS


def _after(words: Sequence[str], verb: int) -> Iterator[str]:
    """The words after the verb, one by one: a copy of the rest of the text (a slice) for
    each verb would take a long text quadratic time."""
    return (words[i] for i in range(verb + 1, len(words)))


def _is_stored(word: str) -> bool:
    return word in _STORED or _is_file(word)


def _is_path(word: str) -> bool:
    return len(word) > 1 and "/" in word


def _is_file(word: str) -> bool:
    """A file named by its kind (a logfile, an outfile) or by its path
    (`.git/lost-found/`, `/etc/hosts`)."""
    return word in _FILES or word.endswith(("file", "files")) or _is_path(word)


@functools.lru_cache(maxsize=8192)
def _lemma(word: str) -> frozenset[str]:
    """The word and the forms it may be inflected from: removes, removed, removing →
    remove; listed, lists, listing → list."""
    forms = {word}
    if word.endswith("s"):
        forms.add(word[:-1])
        if word.endswith("es"):
            forms.add(word[:-2])
        if word.endswith("ies"):
            forms.add(word[:-3] + "y")  # copies → copy, modifies → modify
    if word.endswith("ed"):
        forms.update((word[:-1], word[:-2]))
        if word.endswith("ied"):
            forms.add(word[:-3] + "y")  # copied → copy, modified → modify
        stem = word[:-2]
    elif word.endswith("ing"):
        forms.update((word[:-3], word[:-3] + "e"))
        stem = word[:-3]
    else:
        return frozenset(forms)
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "aeioudfls":
        forms.add(stem[:-1])  # running → run, stopped → stop, dropped → drop
    return frozenset(forms)
