#include "lib/symbolizer.hpp"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace perusetrace {

namespace {

std::string demangled(const char* name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string text = out;
  std::free(out);
  return text;
}

std::string base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

}  // namespace

struct Symbolizer::Impl {
  Dwfl_Callbacks callbacks{};
  Dwfl* dwfl = nullptr;
  std::unordered_map<std::uint64_t, CodePlace> known;
};

Symbolizer::Symbolizer() : impl_(std::make_unique<Impl>()) {
  static char* debuginfo_path = nullptr;
  impl_->callbacks.find_elf = dwfl_linux_proc_find_elf;
  impl_->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
  impl_->callbacks.debuginfo_path = &debuginfo_path;
  impl_->dwfl = dwfl_begin(&impl_->callbacks);
  if (impl_->dwfl == nullptr) return;
  if (dwfl_linux_proc_report(impl_->dwfl, ::getpid()) != 0 ||
      dwfl_report_end(impl_->dwfl, nullptr, nullptr) != 0) {
    dwfl_end(impl_->dwfl);
    impl_->dwfl = nullptr;
  }
}

Symbolizer::~Symbolizer() {
  if (impl_->dwfl != nullptr) dwfl_end(impl_->dwfl);
}

CodePlace Symbolizer::place(std::uint64_t address) {
  const auto cached = impl_->known.find(address);
  if (cached != impl_->known.end()) return cached->second;
  CodePlace p;
  Dwfl_Module* module = impl_->dwfl ? dwfl_addrmodule(impl_->dwfl, address) : nullptr;
  if (module != nullptr) {
    if (const char* name = dwfl_module_addrname(module, address)) {
      p.function = demangled(name);
      // "__libc_start_main@@GLIBC_2.34": the symbol version is not part of the name.
      const auto at = p.function.find('@');
      if (at != std::string::npos && at > 0) p.function.resize(at);
    }
    if (Dwfl_Line* line = dwfl_module_getsrc(module, address)) {
      int number = 0;
      if (const char* file = dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr)) {
        p.file = file;
        p.line = static_cast<std::uint32_t>(number > 0 ? number : 0);
      }
    }
    if (p.function.empty()) {
      Dwarf_Addr start = 0;
      const char* path =
          dwfl_module_info(module, nullptr, &start, nullptr, nullptr, nullptr, nullptr, nullptr);
      char offset[32];
      std::snprintf(offset, sizeof offset, "+0x%llx",
                    static_cast<unsigned long long>(address - start));
      p.function = base_name(path != nullptr ? path : "?") + offset;
    }
  } else {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
    p.function = text;
  }
  impl_->known.emplace(address, p);
  return p;
}

bool Symbolizer::same_module(std::uint64_t address, std::uint64_t other) {
  if (impl_->dwfl == nullptr) return false;
  Dwfl_Module* a = dwfl_addrmodule(impl_->dwfl, address);
  return a != nullptr && a == dwfl_addrmodule(impl_->dwfl, other);
}

}  // namespace perusetrace
