#include "gradcheck.hpp"

#include "ops.hpp"

#include <cmath>
#include <sstream>

namespace attn {

namespace {

// Index of element `flat` in a row-major array of `shape`.
Shape unravel(std::size_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

}  // namespace

GradcheckReport gradcheck(const GradcheckFn& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options) {
  bool any_checked = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) throw ValueError("gradcheck: input " + std::to_string(i) + " is undefined");
    if (inputs[i].requires_grad() && inputs[i].dtype() != Dtype::Float64)
      throw ValueError("gradcheck: input " + std::to_string(i) +
                       " is float32; finite differences need float64 (use .to(attn::Dtype::Float64))");
    any_checked = any_checked || inputs[i].requires_grad();
  }
  // A check of nothing must not read as a pass.
  if (!any_checked)
    throw ValueError("gradcheck: none of the " + std::to_string(inputs.size()) +
                     " inputs requires grad, so there is nothing to check (make them with requires_grad=true)");

  // The scalar we differentiate: L = sum(f(inputs) * r).
  Tensor r;
  auto loss = [&]() {
    Tensor out = f(inputs);
    if (!r.defined()) {
      Generator gen(options.seed);
      r = randn(out.shape(), Dtype::Float64, gen);
    }
    return sum(mul(out, r));
  };

  // Analytic gradients by backward().
  for (const Tensor& in : inputs)
    if (in.requires_grad()) const_cast<Tensor&>(in).zero_grad();
  Tensor l = loss();
  if (l.requires_grad()) l.backward();

  GradcheckReport report;
  no_grad guard;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad()) continue;
    Tensor input = inputs[i];
    xt::xarray<double>& x = input.data<double>();
    Tensor g = input.grad();
    xt::xarray<double> analytic = g.defined() ? g.data<double>() : xt::xarray<double>(xt::zeros<double>(x.shape()));

    GradcheckInputReport item;
    item.input = i;
    item.shape = input.shape();
    double worst_score = -1.0;
    for (std::size_t k = 0; k < x.size(); ++k) {
      const double saved = x.flat(k);
      x.flat(k) = saved + options.eps;
      const double plus = loss().item();
      x.flat(k) = saved - options.eps;
      const double minus = loss().item();
      x.flat(k) = saved;
      const double numeric = (plus - minus) / (2 * options.eps);
      const double a = analytic.flat(k);
      const double err = std::abs(a - numeric);
      const double allowed = options.atol + options.rtol * std::abs(numeric);
      // A NaN error is never "not too large", and once seen it stays in the report (std::max would drop it).
      const double rel = err / std::max(std::abs(numeric), 1e-8);
      item.max_abs_error = std::isnan(err) || std::isnan(item.max_abs_error) ? NAN : std::max(item.max_abs_error, err);
      item.max_rel_error = std::isnan(rel) || std::isnan(item.max_rel_error) ? NAN : std::max(item.max_rel_error, rel);
      if (!(err <= allowed)) item.ok = false;
      const double score = std::isnan(err) ? INFINITY : err / allowed;
      if (score > worst_score) {
        worst_score = score;
        item.worst_index = unravel(k, item.shape);
        item.analytic_at_worst = a;
        item.numeric_at_worst = numeric;
      }
    }
    report.ok = report.ok && item.ok;
    report.inputs.push_back(item);
  }
  return report;
}

std::string GradcheckReport::str() const {
  std::ostringstream os;
  os.precision(6);
  os << "gradcheck " << (ok ? "passed" : "FAILED") << "\n";
  for (const auto& item : inputs)
    os << "  input " << item.input << " " << shape_str(item.shape) << ": " << (item.ok ? "ok" : "MISMATCH")
       << ", max abs error " << item.max_abs_error << ", max rel error " << item.max_rel_error
       << ", worst at " << shape_str(item.worst_index) << " (analytic " << item.analytic_at_worst
       << ", numeric " << item.numeric_at_worst << ")\n";
  return os.str();
}

}  // namespace attn
