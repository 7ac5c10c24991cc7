// perusetrace diff A B [--json FILE]: two traces' reports compared (docs/diff.md).
#pragma once

int diff_main(int argc, char** argv);
