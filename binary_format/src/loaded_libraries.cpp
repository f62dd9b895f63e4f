#include "loaded_libraries.hpp"

#include <link.h>

#include <filesystem>

namespace kernelhub::binary_format {

std::map<std::string, std::string> loaded_libraries() {
  std::map<std::string, std::string> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* map = static_cast<std::map<std::string, std::string>*>(data);
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          const std::filesystem::path p(info->dlpi_name);
          map->emplace(p.filename().string(), p.string());
        }
        return 0;
      },
      &out);
  return out;
}

}  // namespace kernelhub::binary_format
