// Byte-pair encoding on the command line (data/bpe.hpp does the work):
//   attn bpe learn --task en-fr.tsv --merges 4000 --out codes.bpe   joint codes of a corpus
//   attn train --task en-fr.tsv --bpe 4000 ...                        codes learned from the
//       training split, stored in the checkpoint as bpe.codes, used by every later command
// A run with codes trains on subwords; what a user reads (translations, BLEU, exact
// match, heatmaps by default) is on words, the pieces joined back with Bpe::decode.
#pragma once

#include "../data/bpe.hpp"
#include "../data/example.hpp"

#include <CLI/CLI.hpp>
#include <xtensor/xarray.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn::cli {

constexpr std::uint64_t kMaxMerges = 1000000;
constexpr const char* kCodesFile = "bpe.codes";  // the codes in a checkpoint unit (listed in its manifest)

void add_bpe_command(CLI::App& app);

// Joint codes (Sennrich et al.: one set for both languages, which share much of their
// spelling): learned over the source and the target sides together.
data::Bpe learn_joint(const std::vector<data::Example>& examples, std::size_t merges);

// The codes file of a checkpoint (or of `bpe learn`), read whole; an IOError naming `shown`
// and the line when it is not a codes file.
data::Bpe read_codes(const std::string& path, const std::string& shown);
// What from_text does not check: every line valid UTF-8 without control characters, no merge twice,
// and each merge using only characters and symbols earlier lines make (codes in the order learned).
void check_codes_text(const std::string& text, const std::string& shown);

// The pieces [first, last) of each word: a piece ending with "@@" continues into the next.
std::vector<std::pair<std::size_t, std::size_t>> word_spans(const data::Tokens& pieces);

// Attention over subwords [T pieces, S pieces] as attention over words [T words, S words]:
// a target word's row is the mean of its pieces' rows, a source word's column the sum of
// its pieces' columns, so every row stays a distribution over the source words.
xt::xarray<double> merge_subword_attention(const xt::xarray<double>& attention, const data::Tokens& row_pieces,
                                           const data::Tokens& col_pieces);

}  // namespace attn::cli
