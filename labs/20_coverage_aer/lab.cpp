// Lab 20: the coverage penalties and the alignment error rate.
// What to write: labs/20_coverage_aer/README.md. Check it: tools/lab.sh 20 (your copy is labs/work/20_coverage_aer.cpp).
#include "labs/grader/lab20_coverage_aer.hpp"

using attn::Tensor;
using lab::coverage_aer::Links;  // std::set<std::pair<std::size_t, std::size_t>>: links (t, j), both from 0

// ---- your code ----
// attention [B, T, S], steps, src_lengths -> P [B], the chapter's coverage penalty (a training loss: build it
// from attn's ops so that autograd finds the backward). cov_bj = sum over the steps t < steps[b] of a_btj;
// P_b = sum over the source positions j < src_lengths[b] of (1 - cov_bj)^2. Constant masks (an
// xt::xarray<double> wrapped as Tensor(m)) of shape [B, T, 1] and [B, S] pick the steps and positions that
// count; attn::sum(x, {1}) sums over axis 1, attn::pow(x, 2.0) squares.
Tensor coverage_penalty(const Tensor& attention, const std::vector<std::size_t>& steps,
                        const std::vector<std::size_t>& src_lengths) {
  lab::not_implemented("coverage_penalty");
}

// weights [T, S] of one output, src_length, beta -> GNMT's coverage penalty, for ranking beams:
// beta * sum over j < src_length of log(max(min(c_j, 1), 1e-10)), c_j = sum over all steps t of a_tj.
// Read the values with weights.data<double>() (an xt::xarray<double>, w(t, j)).
double coverage_score(const Tensor& weights, std::size_t src_length, double beta) {
  lab::not_implemented("coverage_score");
}

// weights [T, S] of one output -> the hard alignment: for every step t < steps, the link (t, j) to the first
// position j < src_length where a_tj is largest. links.insert({t, j}) adds one.
Links attention_links(const Tensor& weights, std::size_t src_length, std::size_t steps) {
  lab::not_implemented("attention_links");
}

// A corpus: a[k], sure[k], possible[k] are sentence k's links. P = possible ∪ sure (possible may or may not
// repeat the sure links). AER = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|), the four counts summed over all the
// sentences before the one ratio; 0 when |A| + |S| = 0. s.count(link) is 1 when the set s holds the link.
double aer(const std::vector<Links>& a, const std::vector<Links>& sure, const std::vector<Links>& possible) {
  lab::not_implemented("aer");
}
// ---- end of your code ----

#ifndef LAB_NO_MAIN
int main() {
  lab::coverage_aer::CoverageAer mine{coverage_penalty, coverage_score, attention_links, aer};
  return lab::coverage_aer::grade(mine).exit_code();
}
#endif
