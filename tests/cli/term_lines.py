#!/usr/bin/env python3
# term_lines.py: what a full screen showed: the bytes a program wrote to a terminal (as script(1) keeps them) played on a small emulator of the xterm sequences ncurses sends (cursor moves, erases, inserts, deletes, scrolls; colours and modes ignored); every distinct line the screen held, each time the cursor jumped, printed once, right spaces dropped. Usage: term_lines.py FILE [ROWS COLS] (default 24 80).
import re
import sys

data = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
rows, cols = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (24, 80)
screen = [[" "] * cols for _ in range(rows)]
y = x = 0
top, bottom = 0, rows - 1
seen, order = set(), []


def snapshot():
    for line in screen:
        text = "".join(line).rstrip()
        if text and text not in seen:
            seen.add(text)
            order.append(text)


def scroll(first, last, n):  # n > 0: up (lines leave at first), n < 0: down
    for _ in range(abs(n)):
        if n > 0:
            del screen[first]
            screen.insert(last, [" "] * cols)
        else:
            del screen[last]
            screen.insert(first, [" "] * cols)


csi = re.compile(r"\x1b\[([?>=]?)([0-9;]*)([ -/]*)([@-~])")
i = 0
while i < len(data):
    c = data[i]
    if c == "\x1b":
        m = csi.match(data, i)
        if m:
            i = m.end()
            private, params, final = m.group(1), m.group(2), m.group(4)
            nums = [int(p) if p else 0 for p in params.split(";")] if params else []
            n = nums[0] if nums and nums[0] else 1
            if private:
                continue
            if final in "Hf":
                snapshot()
                y = min(max((nums[0] if nums and nums[0] else 1) - 1, 0), rows - 1)
                x = min(max((nums[1] if len(nums) > 1 and nums[1] else 1) - 1, 0), cols - 1)
            elif final == "d":
                snapshot()
                y = min(n - 1, rows - 1)
            elif final == "G" or final == "`":
                x = min(n - 1, cols - 1)
            elif final == "A":
                y = max(y - n, 0)
            elif final == "B":
                y = min(y + n, rows - 1)
            elif final == "C":
                x = min(x + n, cols - 1)
            elif final == "D":
                x = max(x - n, 0)
            elif final == "J":
                snapshot()
                mode = nums[0] if nums else 0
                if mode == 0:
                    screen[y][x:] = [" "] * (cols - x)
                    for r in range(y + 1, rows):
                        screen[r] = [" "] * cols
                elif mode == 2:
                    screen = [[" "] * cols for _ in range(rows)]
            elif final == "K":
                mode = nums[0] if nums else 0
                if mode == 0:
                    screen[y][x:] = [" "] * (cols - x)
                elif mode == 1:
                    screen[y][: x + 1] = [" "] * (x + 1)
                else:
                    screen[y] = [" "] * cols
            elif final == "X":
                for k in range(x, min(x + n, cols)):
                    screen[y][k] = " "
            elif final == "P":
                del screen[y][x : x + n]
                screen[y] += [" "] * (cols - len(screen[y]))
            elif final == "@":
                screen[y][x:x] = [" "] * n
                del screen[y][cols:]
            elif final == "L":
                scroll(y, bottom, -n)
            elif final == "M":
                scroll(y, bottom, n)
            elif final == "S":
                scroll(top, bottom, n)
            elif final == "T":
                scroll(top, bottom, -n)
            elif final == "r":
                top = (nums[0] - 1) if nums and nums[0] else 0
                bottom = (nums[1] - 1) if len(nums) > 1 and nums[1] else rows - 1
                y = x = 0
            continue
        nxt = data[i + 1 : i + 2]
        if nxt == "M":  # reverse index
            if y == top:
                scroll(top, bottom, -1)
            else:
                y = max(y - 1, 0)
            i += 2
        elif nxt in ("(", ")", "*", "+"):
            i += 3
        elif nxt == "]":  # OSC, to BEL or ST
            end = min([k for k in (data.find("\x07", i), data.find("\x1b\\", i)) if k >= 0] or [len(data)])
            i = end + 1
        else:
            i += 2
        continue
    i += 1
    if c == "\r":
        x = 0
    elif c == "\n":
        if y == bottom:
            scroll(top, bottom, 1)
        else:
            y = min(y + 1, rows - 1)
    elif c == "\b":
        x = max(x - 1, 0)
    elif c >= " ":
        screen[y][x] = c
        x = min(x + 1, cols - 1)
snapshot()
print("\n".join(order))
