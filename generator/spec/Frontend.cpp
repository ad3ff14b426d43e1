// The front end's entry points: read -> YamlLoader -> SpecParser -> Lowering.
#include "spec/Frontend.h"

#include "spec/Lowering.h"
#include "spec/SpecParser.h"
#include "spec/YamlLoader.h"

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
  auto text = read_spec_file(path, diag); // at most the size limit + 1 bytes
  if (!text)
    return std::nullopt;
  return load_kernels_from_text(path, std::move(*text), diag);
}

} // namespace tilegen::spec
