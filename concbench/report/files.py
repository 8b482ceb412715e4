"""Where report.py writes: only where it was told, only files of its own.

The names of charts and of a comparison's folders come from the files'
data (workload names, file names), which anyone may have written: they are
reduced to a safe set of characters, with a digest of the original where
anything was replaced, so that "a/b" and "a_b" never land on one file. A
target that exists must be a regular file of ours to replace: never an
input, a symbolic link, a device, a FIFO or a folder. Pages and charts are
written through a descriptor that follows no link, with the mode the umask
gives.
"""

import hashlib
import os
import re
import stat
import sys
import tempfile

from .load import ReportError

# What a file name made from data may hold as it is.
SAFE = re.compile(r"[A-Za-z0-9._-]+")
MOST_CHARACTERS = 100


def safe_name(text, reserved=()):
    """``text`` as a file name inside a folder: unchanged where it is made
    of SAFE characters, does not start with a dot, is short and does not
    end with one of the ``reserved`` endings (the report's own: a workload
    "x-scaling" must not take "x"'s scaling chart); otherwise each other
    character replaced by "_", cut, and a digest of the whole original
    added, so that two names never meet."""
    text = str(text)
    if SAFE.fullmatch(text) and not text.startswith(".") and len(text) <= MOST_CHARACTERS \
            and not text.endswith(tuple(reserved)):
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    kept = re.sub(r"[^A-Za-z0-9._-]", "_", text).lstrip(".")[:MOST_CHARACTERS - 9]
    return "%s-%s" % (kept or "_", digest)


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def same_file(path, others):
    """Whether ``path`` is one of ``others`` (the same file on disk)."""
    for other in others:
        try:
            if os.path.samefile(path, other):
                return True
        except OSError:
            continue
    return False


def check_replaceable(path, option, inputs):
    """Refuse a target that exists and is not a regular file of ours to
    replace (an input, a link, a device, a FIFO, a folder), before anything
    is written; its folder must exist and be writable."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        found = None
    except OSError as exc:
        raise ReportError("%s %s: %s" % (option, path, exc.strerror or exc)) from None
    if found is not None:
        if stat.S_ISLNK(found.st_mode):
            raise ReportError("%s %s: is a symbolic link; left as it is" % (option, path))
        if stat.S_ISDIR(found.st_mode):
            raise ReportError("%s %s: is a directory" % (option, path))
        if not stat.S_ISREG(found.st_mode):
            raise ReportError("%s %s: is not a regular file (a device or a FIFO); left as "
                              "it is" % (option, path))
        if same_file(path, inputs):
            raise ReportError("%s %s: is one of the input files; it would be lost"
                              % (option, path))
        if not os.access(path, os.W_OK):
            raise ReportError("%s %s: not writable" % (option, path))


def check_html_target(path, inputs):
    """--html: a page path that can be written, checked before anything is
    (``-``: standard output)."""
    if path == "-":
        return
    if path.endswith(os.sep) or (os.altsep and path.endswith(os.altsep)):
        raise ReportError("--html %s: names a directory, not a file" % path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ReportError("--html %s: no such directory %s" % (path, folder))
    if not os.access(folder, os.W_OK):
        raise ReportError("--html %s: not writable" % path)
    check_replaceable(path, "--html", inputs)


def write_page(path, text, inputs):
    """Write the page through a temporary file beside it, so that a failed
    write leaves any earlier page as it was, and no temporary file is left
    on any path; ``-``: to standard output."""
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    folder = os.path.dirname(os.path.abspath(path))
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".report-", suffix=".html")
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(temporary, 0o666 & ~current_umask())
        # Checked again just before: nothing may have taken the name since.
        check_replaceable(path, "--html", inputs)
        os.replace(temporary, path)
        temporary = None
    except OSError as exc:
        raise ReportError("--html %s: %s" % (path, exc.strerror or exc)) from None
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def check_plot_folder(directory, inputs):
    """--plot DIR: a folder, existing or to be made, never an input file."""
    try:
        found = os.stat(directory)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ReportError("--plot %s: %s" % (directory, exc.strerror or exc)) from None
    if not stat.S_ISDIR(found.st_mode):
        raise ReportError("--plot %s: %s, not a directory" % (
            directory, "is one of the input files" if same_file(directory, inputs)
            else "exists"))


def make_folder(path, option):
    """Make ``path`` (a folder the report's data named, inside one the user
    gave) unless it is one already; a link there is not followed."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        try:
            os.makedirs(path)
        except OSError as exc:
            raise ReportError("%s %s: %s" % (option, path, exc.strerror or exc)) from None
        return
    if stat.S_ISLNK(found.st_mode) or not stat.S_ISDIR(found.st_mode):
        raise ReportError("%s %s: exists and is not a folder of ours (a link or a file); "
                          "left as it is" % (option, path))


def open_own(path, option, inputs):
    """A binary file object for writing ``path``, a chart of ours: a regular
    file replaced or made, never through a symbolic link."""
    check_replaceable(path, option, inputs)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.fdopen(os.open(path, flags, 0o666), "wb")
    except OSError as exc:
        raise ReportError("%s %s: %s" % (option, path, exc.strerror or exc)) from None
