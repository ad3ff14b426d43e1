// The front end's entry points: read -> YamlLoader -> SpecParser -> Lowering.
#include "spec/Frontend.h"

#include "spec/Lowering.h"
#include "spec/SpecParser.h"
#include "spec/YamlLoader.h"

#include <fstream>
#include <sstream>

namespace tilegen::spec {

std::optional<std::vector<ir::Kernel>> load_kernels_from_text(const std::string& path,
                                                              std::string text, DiagEngine& diag) {
  try {
    auto file = load_yaml(path, std::move(text), diag);
    if (!file)
      return std::nullopt;
    auto spec = parse_spec(*file, diag);
    if (!spec)
      return std::nullopt;
    return lower_spec(*spec, diag);
  } catch (const std::bad_alloc&) {
    SourceLoc l;
    l.file = std::make_shared<const std::string>(path);
    diag.error(l, "out of memory while reading the spec");
    return std::nullopt;
  }
}

std::optional<std::vector<ir::Kernel>> load_kernels(const std::string& path, DiagEngine& diag) {
  std::ifstream in(path, std::ios::binary);
  SourceLoc l;
  l.file = std::make_shared<const std::string>(path);
  if (!in) {
    diag.error(l, "cannot open spec file");
    return std::nullopt;
  }
  // Read at most one byte past the limit: the loader reports the size, without this process
  // reading a multi-gigabyte file first.
  constexpr size_t kReadLimit = (1 << 20) + 1;
  std::string text(kReadLimit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(kReadLimit));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) {
    diag.error(l, "error reading spec file");
    return std::nullopt;
  }
  if (text.size() == kReadLimit) {
    in.seekg(0, std::ios::end);
    auto size = in.tellg();
    diag.error(l, "spec file is too large (" +
                      (size > 0 ? std::to_string(static_cast<long long>(size)) : "over 1 MiB") +
                      " bytes; the limit is " + std::to_string(1 << 20) + ")");
    return std::nullopt;
  }
  return load_kernels_from_text(path, std::move(text), diag);
}

} // namespace tilegen::spec
