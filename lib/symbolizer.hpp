// Code addresses of this process as function, file and line: the samples' call stacks, at
// MPI_Finalize (never in the signal handler). elfutils reads the symbol tables and, where the
// program has them, the DWARF line tables; C++ names are demangled.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace perusetrace {

struct CodePlace {
  std::string function;  // "MODULE+0xOFFSET" when no symbol covers the address
  std::string file;      // "" without line information
  std::uint32_t line = 0;
};

class Symbolizer {
 public:
  Symbolizer();  // reports this process's modules as they are mapped now
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;
  CodePlace place(std::uint64_t address);
  // Whether `address` lies in the same module as `other` (the tracer's own code).
  bool same_module(std::uint64_t address, std::uint64_t other);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perusetrace
