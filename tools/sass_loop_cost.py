#!/usr/bin/env python3
"""The static cost of a kernel's hot loop, read from its SASS: what ptxas made of the k loop,
without a GPU.

Usage: sass_loop_cost.py KERNEL.sass [--json]

KERNEL.sass is the output of `cuobjdump --dump-sass` on a cubin (one or more kernels; each is
reported). A binary the tuner compiled is in its database:
    sqlite3 tuning.db "select writefile('k.cubin', cubin) from binaries where cache_key = '...'"
    cuobjdump --dump-sass k.cubin > k.sass

The hot loop is the backward branch whose body holds the most FFMAs. For it the script counts
the instructions, the FFMAs (and their share), LDS.128, 16-byte global loads (LDG.E.128, any
cache modifier), LDGSTS (cp.async) and local-memory accesses (LDL/STL: spills), and two static
costs:
  stall cycles    the stall counts ptxas encodes in the control bits of each instruction
                  (bits 41-44 of the second 64-bit word): the cycles one warp needs to issue
                  the loop once when nothing else holds it back;
  bank conflicts  among the register sources of each FFMA that are not read from the operand
                  reuse cache (the previous instruction read the same register in the same
                  slot with .reuse), one for every extra distinct register in a bank (two
                  banks: register number mod 2).
cost = stall cycles + bank conflicts. On the H200 it ranked the FFMA orders of the warptile
family's tile shapes as measured (docs/RESULTS.md, "Serpentine FFMA order"); it is a guide
for comparing builds of one kernel, not a time.

--json prints one JSON object per kernel instead of the table. Input without SASS
instructions is an error (exit 1); so is a kernel without a loop, reported in its place (as
{"kernel": ..., "error": ...} with --json) after which the other kernels are still reported.
A kernel listed twice (two dumps of one kernel, concatenated) is reported twice, in order.
Each report names the architecture its code is for (the dump's "code for sm_XX" line above
it; "arch" in the JSON, null where the listing names none), so that the dumps of a fatbin of
several architectures are told apart.
Kernel and file names reach the terminal with their control characters escaped as \\xNN. A
standard output that fails (a full disk, a reader gone after `| head`) is exit status 2.
"""
import json
import re
import sys

import script_io
from script_io import UserError, say

INSTRUCTION = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*/\* (0x[0-9a-f]{16}) \*/")
CONTROL = re.compile(r"^\s+/\* (0x[0-9a-f]{16}) \*/\s*$")
FUNCTION = re.compile(r"Function : (\S+)")
ARCH = re.compile(r"^\s*code for (sm_\w+)")
REGISTER_BANKS = 2


def parse(text):
    """[(kernel name, architecture or None, [(address, instruction text, control word)])] in
    listing order; a name listed twice gives two entries."""
    kernels, lines, arch = [], text.split("\n"), None
    for i, line in enumerate(lines):
        if m := ARCH.match(line):
            arch = m.group(1)
        elif m := FUNCTION.search(line):
            kernels.append((m.group(1), arch, []))
        elif (m := INSTRUCTION.match(line)) and i + 1 < len(lines) and (c := CONTROL.match(lines[i + 1])):
            if not kernels:
                kernels.append(("kernel", arch, []))
            kernels[-1][2].append((int(m.group(1), 16), m.group(2), int(c.group(1), 16)))
    return [kernel for kernel in kernels if kernel[2]]


def opcode(text):
    """The opcode with its modifiers, past a predicate guard ('@P0 FFMA ...' -> 'FFMA'); ""
    for an instruction with no text."""
    words = text.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def sources(text):
    """The source operands of an instruction: everything after the destination."""
    body = text.split(None, 2 if text.startswith("@") else 1)[-1]
    return [s.strip() for s in body.split(",")[1:]]


def hot_loop(instructions):
    """The body of the backward branch that holds the most FFMAs, or None."""
    best = None
    for address, text, _ in instructions:
        m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) < address:
            body = [x for x in instructions if int(m.group(1), 16) <= x[0] <= address]
            ffma = sum(1 for x in body if opcode(x[1]).startswith("FFMA"))
            if best is None or ffma > best[0]:
                best = (ffma, body)
    return best[1] if best else None


def bank_conflicts(body):
    """Conflicts among FFMA sources not read from the reuse cache (see the module doc)."""
    conflicts, previous = 0, None
    for _, text, _ in body:
        if not opcode(text).startswith("FFMA"):
            previous = None  # another instruction in between: the reuse chain is broken
            continue
        slots = []
        for operand in sources(text)[:3]:
            m = re.match(r"-?\|?R(\d+)(\.reuse)?", operand)
            slots.append((int(m.group(1)), bool(m.group(2))) if m else None)
        banks = {}
        for slot, reg in enumerate(slots):
            if reg is None:
                continue
            before = previous[slot] if previous is not None and slot < len(previous) else None
            cached = before is not None and before[0] == reg[0] and before[1]
            if not cached:
                banks.setdefault(reg[0] % REGISTER_BANKS, set()).add(reg[0])
        conflicts += sum(len(regs) - 1 for regs in banks.values())
        previous = slots
    return conflicts


def loop_cost(name, arch, instructions):
    body = hot_loop(instructions)
    if body is None:
        raise UserError("no backward branch, so no loop to measure")
    ops = [opcode(text) for _, text, _ in body]
    count = lambda pred: sum(1 for o in ops if pred(o))  # noqa: E731
    stall = sum((control >> 41) & 0xF for _, _, control in body)
    conflicts = bank_conflicts(body)
    ffma = count(lambda o: o.startswith("FFMA"))
    return {"kernel": name, "arch": arch, "instructions": len(body), "ffma": ffma, "ffma_share": ffma / len(body),
            "lds128": count(lambda o: o.startswith("LDS") and ".128" in o),
            "ldg128": count(lambda o: o.startswith("LDG.") and ".128" in o),
            "ldgsts": count(lambda o: o.startswith("LDGSTS")),
            "local": count(lambda o: o.startswith("LDL") or o.startswith("STL")),
            "stall_cycles": stall, "bank_conflicts": conflicts, "cost": stall + conflicts}


def main():
    parser = script_io.parser_for(__doc__)
    parser.add_argument("sass", help="output of cuobjdump --dump-sass")
    parser.add_argument("--json", action="store_true", help="one JSON object per kernel")
    args = parser.parse_args()
    try:
        with open(args.sass, encoding="utf-8") as f:
            kernels = parse(f.read())
    except OSError as e:
        raise UserError(f"cannot read {args.sass}: {e.strerror}")
    except UnicodeDecodeError:
        raise UserError(f"{args.sass}: not text (a cubin? give cuobjdump --dump-sass's output for it)")
    if not kernels:
        raise UserError(f"{args.sass}: no SASS instructions (expected cuobjdump --dump-sass output)")
    failed = False
    for name, arch, instructions in kernels:
        heading = name + (f" ({arch})" if arch else "")
        try:
            r = loop_cost(name, arch, instructions)
        except UserError as e:  # this kernel has no loop: said in its place, the others still reported
            failed = True
            lines = [json.dumps({"kernel": name, "arch": arch, "error": str(e)})] if args.json else [heading, f"  {e}"]
        else:
            lines = [json.dumps(r)] if args.json else [
                heading,
                f"  hot loop: {r['instructions']} instructions, {r['ffma']} FFMA ({100 * r['ffma_share']:.1f}%), "
                f"{r['lds128']} LDS.128, {r['ldg128']} LDG.128, {r['ldgsts']} LDGSTS, {r['local']} LDL/STL",
                f"  static cost {r['cost']} = {r['stall_cycles']} stall cycles + {r['bank_conflicts']} bank conflicts"]
        for line in lines:
            say(line)  # escaped: a kernel's name is the listing's text
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    script_io.run(main)
