// perusetrace report ARCHIVE [--json FILE] [--html FILE]: what the Peruse events of an archive
// say about each rank, each message, the wait patterns, the queues and the collectives.
#pragma once

int report_main(int argc, char** argv);
