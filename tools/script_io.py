"""What the Python tools share at their edges, so that they answer as the C++ tools do: exit
status 1 for bad arguments or input and 2 for an output the machine would not take, one line
of message and no traceback, and text from files and command lines printed escaped.
"""
import argparse
import os
import signal
import sys
import warnings


class UserError(Exception):
    """Bad input: the script prints the message and exits with 1."""


class OutputFailure(Exception):
    """An output the machine would not take (a full disk, a reader gone after `| head`): the
    script prints the message and exits with 2, as the C++ tools do for their environment's
    errors."""


def is_hidden_control(code_point):
    """A control character outside ASCII: C1 (U+0080 to U+009F; U+009B starts a terminal's
    escape codes), the line and paragraph separators, or an invisible format character that
    reorders or hides text (the bidirectional controls, the zero-width space, the soft hyphen,
    the invisible operators, the tag characters, the byte order mark; not the zero-width joiner
    and non-joiner, which names in Persian and emoji need). The same set as src/util/text.h's
    is_unicode_control, which says why each is in it."""
    return (0x80 <= code_point <= 0x9F or code_point in (0xAD, 0x061C, 0x180E, 0x200B, 0x200E, 0x200F, 0xFEFF)
            or 0x2028 <= code_point <= 0x202E or 0x2060 <= code_point <= 0x206F or 0xFFF9 <= code_point <= 0xFFFB
            or 0xE0000 <= code_point <= 0xE007F)


def printable(text):
    """`text` with each control character (C0, DEL, C1 and the invisible format characters)
    written as \\xNN escapes of its UTF-8 bytes, and each byte of a file name that is not UTF-8
    (which Python holds as a lone surrogate) as \\xNN too: the C++ tools' printable
    (src/util/text.h). A name from a file or a command line then cannot start a line of its own,
    restyle the terminal or show a line backwards."""
    out = []
    for c in str(text):
        code_point = ord(c)
        if 0xDC80 <= code_point <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{code_point - 0xDC00:02x}")
        elif code_point < 0x20 or code_point == 0x7F or is_hidden_control(code_point) or 0xD800 <= code_point <= 0xDFFF:
            out.append("".join(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogatepass")))
        else:
            out.append(c)
    return "".join(out)


def say(text):
    """Prints a line of the script's output, escaped (printable; a character the output's
    encoding lacks, as \\N{...} or \\uXXXX). A standard output that does not take it (a full
    disk; a reader gone, as after `| head`; none open) is an OutputFailure."""
    if sys.stdout is None:
        raise OutputFailure("cannot write standard output: it is closed")
    encoding = sys.stdout.encoding or "utf-8"
    try:
        print(printable(text).encode(encoding, "backslashreplace").decode(encoding), flush=True)
    except OSError as e:
        raise OutputFailure(f"cannot write standard output: {e.strerror or e}")


def program_name():
    """The running script's name, as its messages begin."""
    return os.path.basename(sys.argv[0])


def note(text):
    """Tells the user, on standard error, something the run did not stop for: one escaped line,
    "SCRIPT: note: TEXT". A standard error that is closed or fails (a full disk, a reader gone)
    stops nothing, as it stops nothing in Python's own warnings: the files are the work."""
    if sys.stderr is None:
        return
    try:
        print(printable(f"{program_name()}: note: {text}"), file=sys.stderr, flush=True)
    except OSError:
        pass


def note_warning(message, category, filename, lineno, file=None, line=None):
    """warnings.showwarning for the scripts: what matplotlib or numpy warns of is a note, not
    their two lines that quote a line of their source."""
    note(message)


class ArgumentParser(argparse.ArgumentParser):
    def print_help(self, file=None):
        """--help on standard output, written and flushed here (argparse passes over a failed
        write): one that cannot take it (closed, a full disk, a reader gone after `| head`) is an
        OutputFailure, exit 2, as in the C++ tools, where argparse's own ended in a traceback
        (exit 1) or, with standard output closed, wrote standard error (exit 0)."""
        if file is not None:
            return super().print_help(file)
        if sys.stdout is None:
            raise OutputFailure("cannot write the help: standard output is closed")
        try:
            sys.stdout.write(self.format_help())
            sys.stdout.flush()
        except OSError as e:
            raise OutputFailure(f"cannot write the help: {e.strerror or e}")

    def error(self, message):
        """Bad arguments are user errors: exit 1, as the C++ tools do (argparse would exit 2)."""
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {printable(message)}\n")


def parser_for(doc):
    """An ArgumentParser whose --help is the script's docstring: its first paragraph above the
    options, the rest below them."""
    return ArgumentParser(description=doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                          epilog="\n\n".join(doc.split("\n\n")[1:]))


def run(main):
    """Runs a script's main(), turning a UserError into a one-line message and exit status 1, an
    OutputFailure into one and exit status 2. Ctrl-C and SIGTERM end it with 130 and 143, as
    they end the C++ tools, once a file being written is removed (write_replacing's cleanup,
    which SIGTERM's default would skip)."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    warnings.showwarning = note_warning
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(128 + signal.SIGINT)
    except (UserError, OutputFailure) as e:
        # Said where standard error can take it; a closed or failing one changes no exit status
        # (a reader gone after `2>&1 | head` made it 1, not 2), nor sends the message to stdout.
        if sys.stderr is not None:
            try:
                print(f"{program_name()}: {printable(e)}", file=sys.stderr, flush=True)
            except OSError:
                pass
        if isinstance(e, OutputFailure):
            # Standard output may hold what it could not write: Python would try again at its
            # exit and add a message and status of its own (120).
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (AttributeError, OSError, ValueError):
                pass  # no standard output open: nothing held
            sys.exit(2)
        sys.exit(1)
