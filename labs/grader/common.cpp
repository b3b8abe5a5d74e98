// The out-of-line parts of lab.hpp, compiled once into libattn_labs.
#include "labs/grader/lab.hpp"

namespace lab {

NotImplemented::NotImplemented(const std::string& what) : std::logic_error(what + ": not implemented") {}
NotImplemented::~NotImplemented() = default;

void not_implemented(const std::string& what) { throw NotImplemented(what); }

}  // namespace lab
