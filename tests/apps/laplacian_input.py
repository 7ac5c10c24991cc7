#!/usr/bin/python3
"""Input for MUMPS's simpletest programs (Debian's mumps-test): the 5-point Laplacian on an
N x N grid, with the right-hand side made from the solution x_i = i (1-based), so the solution
printed is 1, 2, 3, ... up to rounding.

    laplacian_input.py N > input
"""
import sys


def main():
    n = int(sys.argv[1])
    size = n * n
    entries = []
    for row in range(n):
        for col in range(n):
            i = row * n + col
            entries.append((i, i, 4.0))
            for r, c in ((row - 1, col), (row + 1, col), (row, col - 1), (row, col + 1)):
                if 0 <= r < n and 0 <= c < n:
                    entries.append((i, r * n + c, -1.0))
    rhs = [0.0] * size
    for i, j, a in entries:
        rhs[i] += a * (j + 1)
    out = [f"{size} :N", f"{len(entries)} :NZ"]
    out += [f"{i + 1} {j + 1} {a}" for i, j, a in entries]
    out += [f"{b}" for b in rhs]
    print("\n".join(out))


if __name__ == "__main__":
    main()
