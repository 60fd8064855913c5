// BPE merging as tokenizers' Word::merge_all: a min-heap of (rank, position) candidate merges;
// stale entries (a side already merged away) are skipped when popped. Merge ranks live in an
// open-addressing table keyed by the id pair; merged pieces are cached in mutex-guarded shards.
#include "tokenizer/bpe.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "tokenizer/byte_level.hpp"

namespace kernelrl::tokenizer {

using common::Expected;
using common::make_error;

namespace {

struct MergeValue {
  uint32_t rank = 0;
  int32_t new_id = -1;
};

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// Open addressing with linear probing; keys are id pairs (never all ones).
class PairTable {
 public:
  void reserve(std::size_t n) {
    std::size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;
    keys_.assign(capacity, kEmpty);
    values_.assign(capacity, MergeValue{});
    mask_ = capacity - 1;
  }

  void insert_or_assign(uint64_t key, MergeValue value) {
    std::size_t i = slot(key);
    while (keys_[i] != kEmpty && keys_[i] != key) i = (i + 1) & mask_;
    keys_[i] = key;
    values_[i] = value;
  }

  const MergeValue* find(uint64_t key) const {
    std::size_t i = slot(key);
    while (keys_[i] != kEmpty) {
      if (keys_[i] == key) return &values_[i];
      i = (i + 1) & mask_;
    }
    return nullptr;
  }

 private:
  static constexpr uint64_t kEmpty = ~0ull;
  std::size_t slot(uint64_t key) const {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<std::size_t>(key) & mask_;
  }
  std::vector<uint64_t> keys_;
  std::vector<MergeValue> values_;
  std::size_t mask_ = 0;
};

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringMap = std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>>;

// Pieces up to kMaxCachedBytes, in shards that are emptied when full (no eviction order needed:
// the cache only saves time, it never changes ids).
class PieceCache {
 public:
  bool lookup(std::string_view piece, std::size_t hash, std::vector<int32_t>& out) const {
    Shard& shard = shards_[hash % kShards];
    std::lock_guard lock(shard.mutex);
    auto it = shard.map.find(piece);
    if (it == shard.map.end()) return false;
    out.insert(out.end(), it->second.begin(), it->second.end());
    return true;
  }

  void insert(std::string_view piece, std::size_t hash, std::vector<int32_t> ids) const {
    Shard& shard = shards_[hash % kShards];
    std::lock_guard lock(shard.mutex);
    if (shard.map.size() >= kMaxPiecesPerShard) shard.map.clear();
    shard.map.emplace(std::string(piece), std::move(ids));
  }

  static constexpr std::size_t kMaxCachedBytes = 128;

 private:
  static constexpr std::size_t kShards = 16;
  static constexpr std::size_t kMaxPiecesPerShard = 4096;
  struct Shard {
    std::mutex mutex;
    StringMap map;
  };
  mutable std::array<Shard, kShards> shards_;
};

struct Symbol {
  int32_t id;
  int32_t prev;
  int32_t next;
  uint32_t n_bytes;  // 0 once merged into its left neighbour
};

struct Candidate {
  uint32_t rank;
  uint32_t pos;
  int32_t new_id;
};

// std heap functions build a max-heap; this ordering puts the lowest (rank, pos) on top.
bool lower_priority(const Candidate& a, const Candidate& b) {
  return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
}

}  // namespace

struct BpeModel::State {
  BpeOptions options;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> spelled_to_id;
  std::array<int32_t, 256> byte_ids{};
  PairTable merges;
  std::size_t n_merges = 0;
  PieceCache cache;

  // Merges `bytes` (two or more) into `out`.
  void merge(std::string_view bytes, std::vector<int32_t>& out) const;
  void push_candidate(std::vector<Candidate>& heap, const std::vector<Symbol>& symbols, int32_t left_pos) const;
};

void BpeModel::State::push_candidate(std::vector<Candidate>& heap, const std::vector<Symbol>& symbols,
                                     int32_t left_pos) const {
  const Symbol& left = symbols[left_pos];
  if (left.next < 0) return;
  const MergeValue* m = merges.find(pair_key(left.id, symbols[left.next].id));
  if (m == nullptr) return;
  heap.push_back({m->rank, static_cast<uint32_t>(left_pos), m->new_id});
  std::push_heap(heap.begin(), heap.end(), lower_priority);
}

void BpeModel::State::merge(std::string_view bytes, std::vector<int32_t>& out) const {
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Candidate> heap;
  symbols.clear();
  heap.clear();
  bool previous_unknown = false;
  for (char c : bytes) {
    const int32_t id = byte_ids[static_cast<unsigned char>(c)];
    if (id >= 0) {
      symbols.push_back({id, -1, -1, 1});
      previous_unknown = false;
    } else if (options.unk_id >= 0) {
      if (options.fuse_unk && previous_unknown) {
        ++symbols.back().n_bytes;
      } else {
        symbols.push_back({options.unk_id, -1, -1, 1});
      }
      previous_unknown = true;
    }
  }
  const auto n = static_cast<int32_t>(symbols.size());
  for (int32_t i = 0; i < n; ++i) {
    symbols[i].prev = i - 1;
    symbols[i].next = i + 1 < n ? i + 1 : -1;
  }
  for (int32_t i = 0; i + 1 < n; ++i) push_candidate(heap, symbols, i);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), lower_priority);
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& current = symbols[top.pos];
    if (current.n_bytes == 0 || current.next < 0) continue;
    Symbol& right = symbols[current.next];
    const MergeValue* m = merges.find(pair_key(current.id, right.id));
    if (m == nullptr || m->new_id != top.new_id) continue;  // stale: a side changed since the push

    current.id = top.new_id;
    current.n_bytes += right.n_bytes;
    right.n_bytes = 0;
    current.next = right.next;
    if (current.next >= 0) symbols[current.next].prev = static_cast<int32_t>(top.pos);
    if (current.prev >= 0) push_candidate(heap, symbols, current.prev);
    push_candidate(heap, symbols, static_cast<int32_t>(top.pos));
  }
  for (const Symbol& s : symbols) {
    if (s.n_bytes > 0) out.push_back(s.id);
  }
}

BpeModel::BpeModel() : state_(std::make_unique<State>()) {}
BpeModel::BpeModel(BpeModel&&) noexcept = default;
BpeModel& BpeModel::operator=(BpeModel&&) noexcept = default;
BpeModel::~BpeModel() = default;

Expected<BpeModel> BpeModel::build(const std::vector<std::string>& tokens,
                                   const std::vector<std::pair<std::string, std::string>>& merges,
                                   const BpeOptions& options) {
  BpeModel model;
  State& s = *model.state_;
  s.options = options;
  s.spelled_to_id.reserve(tokens.size());
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    if (!tokens[id].empty()) s.spelled_to_id.insert_or_assign(tokens[id], static_cast<int32_t>(id));  // later wins
  }
  for (int b = 0; b < 256; ++b) s.byte_ids[b] = model.find(byte_level::spell_byte(static_cast<unsigned char>(b)));

  s.merges.reserve(merges.size());
  std::string joined;
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    joined = left + right;
    const int32_t left_id = model.find(left);
    const int32_t right_id = model.find(right);
    const int32_t new_id = model.find(joined);
    const std::string& missing = left_id < 0 ? left : right_id < 0 ? right : joined;
    if (left_id < 0 || right_id < 0 || new_id < 0) {
      return make_error("BPE merge " + std::to_string(rank) + " `" + left + " " + right + "` uses `" + missing +
                        "`, which is not in the vocabulary");
    }
    // Later duplicates overwrite earlier ones, as tokenizers' HashMap collect does.
    s.merges.insert_or_assign(pair_key(left_id, right_id), {static_cast<uint32_t>(rank), new_id});
  }
  s.n_merges = merges.size();
  return model;
}

void BpeModel::encode_piece(std::string_view bytes, std::vector<int32_t>& out) const {
  const State& s = *state_;
  if (bytes.empty()) return;
  if (bytes.size() == 1) {
    const int32_t id = s.byte_ids[static_cast<unsigned char>(bytes[0])];
    if (id >= 0 || s.options.unk_id >= 0) out.push_back(id >= 0 ? id : s.options.unk_id);
    return;
  }
  if (s.options.ignore_merges) {
    const int32_t id = find(byte_level::spell(bytes));
    if (id >= 0) {
      out.push_back(id);
      return;
    }
  }
  if (bytes.size() > PieceCache::kMaxCachedBytes) {
    s.merge(bytes, out);
    return;
  }
  const std::size_t hash = StringHash{}(bytes);
  if (s.cache.lookup(bytes, hash, out)) return;
  const std::size_t first = out.size();
  s.merge(bytes, out);
  s.cache.insert(bytes, hash, std::vector<int32_t>(out.begin() + static_cast<std::ptrdiff_t>(first), out.end()));
}

int32_t BpeModel::find(std::string_view spelled) const {
  auto it = state_->spelled_to_id.find(spelled);
  return it == state_->spelled_to_id.end() ? -1 : it->second;
}

std::size_t BpeModel::n_merges() const { return state_->n_merges; }
std::size_t BpeModel::n_entries() const { return state_->spelled_to_id.size(); }

}  // namespace kernelrl::tokenizer
