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
constexpr std::array<std::pair<RuleSet, std::string_view>, 3> kRuleSetNames{{
    {RuleSet::STRICT, "strict"},
    {RuleSet::KERNELBENCH, "kernelbench"},
    {RuleSet::OBSERVE, "observe"},
}};

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& names, E value) {
  for (auto [v, n] : names)
    if (v == value) return n;
  return "?";
}

template <class E, std::size_t N>
std::optional<E> value_named(const std::array<std::pair<E, std::string_view>, N>& names, std::string_view name) {
  for (auto [v, n] : names)
    if (n == name) return v;
  return std::nullopt;
}
}  // namespace

std::string_view to_string(Status s) { return name_of(kStatusNames, s); }
std::string_view to_string(Format f) { return name_of(kFormatNames, f); }
std::string_view to_string(RuleSet r) { return name_of(kRuleSetNames, r); }
std::optional<Status> parse_status(std::string_view s) { return value_named(kStatusNames, s); }
std::optional<Format> parse_format(std::string_view s) { return value_named(kFormatNames, s); }
std::optional<RuleSet> parse_rule_set(std::string_view s) { return value_named(kRuleSetNames, s); }

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
