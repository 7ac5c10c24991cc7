// perusetrace export FORMAT ARCHIVE [-o FILE]: an archive in another tool's format, streamed.
#pragma once

int export_main(int argc, char** argv);
