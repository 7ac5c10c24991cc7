// A stdio stream that writes gzip (zlib), so that the .prv merge writes PREFIX.prv.gz, which
// Paraver reads as it is, with the same fputs calls as a plain file.
#pragma once

#include <cstdio>
#include <string>

namespace perusetrace::prv {

// Opens `path` for writing gzip at zlib level `level` (1: fastest); nullptr with errno set on
// failure. fclose flushes the compressor and reports its errors.
std::FILE* open_gzip(const std::string& path, int level);

}  // namespace perusetrace::prv
