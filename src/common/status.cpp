#include "common/status.hpp"

#include <array>
#include <utility>

namespace kernelrl::common {

namespace {
constexpr std::array<std::pair<Status, std::string_view>, 7> kStatusNames{{
    {Status::OK, "OK"},
    {Status::FORMAT_ERROR, "FORMAT_ERROR"},
    {Status::COMPILE_ERROR, "COMPILE_ERROR"},
    {Status::RUNTIME_ERROR, "RUNTIME_ERROR"},
    {Status::TIMEOUT, "TIMEOUT"},
    {Status::WRONG_OUTPUT, "WRONG_OUTPUT"},
    {Status::REJECTED, "REJECTED"},
}};
constexpr std::array<std::pair<Format, std::string_view>, 3> kFormatNames{{
    {Format::NATIVE, "native"},
    {Format::HOST, "host"},
    {Format::KERNELBENCH, "kernelbench"},
}};
}  // namespace

std::string_view to_string(Status s) {
  for (auto [v, n] : kStatusNames)
    if (v == s) return n;
  return "?";
}

std::string_view to_string(Format f) {
  for (auto [v, n] : kFormatNames)
    if (v == f) return n;
  return "?";
}

std::optional<Status> parse_status(std::string_view s) {
  for (auto [v, n] : kStatusNames)
    if (n == s) return v;
  return std::nullopt;
}

std::optional<Format> parse_format(std::string_view s) {
  for (auto [v, n] : kFormatNames)
    if (n == s) return v;
  return std::nullopt;
}

std::optional<Format> format_from_extension(std::string_view path) {
  auto ends = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix;
  };
  if (ends(".cu") || ends(".cuh")) return Format::NATIVE;
  if (ends(".cpp") || ends(".cc") || ends(".cxx")) return Format::HOST;
  if (ends(".py")) return Format::KERNELBENCH;
  return std::nullopt;
}

}  // namespace kernelrl::common
