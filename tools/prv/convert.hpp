// perusetrace prv ARCHIVE [-o PREFIX]: an OTF2 archive written by perusetrace to a Paraver
// trace (PREFIX.prv, PREFIX.pcf, PREFIX.row).
#pragma once

int prv_main(int argc, char** argv);
