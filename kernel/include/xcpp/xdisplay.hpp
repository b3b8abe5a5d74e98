// xcpp::display(x): shows x in the notebook with every MIME type of
// mime_bundle_repr(x) (found by argument-dependent lookup, as in xeus-cling).
// The same API as xeus-cling's <xcpp/xdisplay.hpp>, for attn's kernel: the
// bundle goes to the kernel through two C functions it exports.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cxxabi.h>
#include <ios>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace nl = nlohmann;  // xeus's own alias, which notebooks written for xeus may use

extern "C" void attn_kernel_display(const char* data, const char* metadata, const char* transient, int update);
extern "C" void attn_kernel_clear_output(int wait);
extern "C" void attn_kernel_execute_result(const char* data);

namespace xcpp {

namespace detail {

template <class T, class = void>
struct has_mime_bundle : std::false_type {};
template <class T>
struct has_mime_bundle<T, std::void_t<decltype(mime_bundle_repr(std::declval<const T&>()))>> : std::true_type {};

template <class T, class = void>
struct printable : std::false_type {};
template <class T>
struct printable<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>>
    : std::true_type {};

template <class T>
nl::json bundle_of(const T& x) {
  if constexpr (has_mime_bundle<T>::value) {
    return mime_bundle_repr(x);
  } else {
    static_assert(printable<T>::value, "xcpp::display: the type has neither mime_bundle_repr(x) nor operator<<");
    std::ostringstream s;
    s << x;
    return nl::json{{"text/plain", s.str()}};
  }
}

inline std::string dump(const nl::json& j) { return j.dump(-1, ' ', false, nl::json::error_handler_t::replace); }

// A cell's last expression without ';' is shown (the kernel rewrites it as
// `show_result(((x), no_value{}))`): the comma below gives the value, and the
// built-in comma gives no_value for a void expression, which shows nothing.
struct no_value {};
template <class T>
const T& operator,(const T& value, no_value) {
  return value;
}

inline void show_result(no_value) {}

template <class T>
void show_result(const T& x) {
  nl::json bundle;
  if constexpr (has_mime_bundle<T>::value) {
    bundle = mime_bundle_repr(x);
  } else if constexpr (printable<T>::value) {
    std::ostringstream s;
    s << std::boolalpha << x;
    bundle = nl::json{{"text/plain", s.str()}};
  } else {  // shown by its type, rather than failing the cell
    int status = 0;
    char* name = abi::__cxa_demangle(typeid(T).name(), nullptr, nullptr, &status);
    bundle = nl::json{{"text/plain", std::string(status == 0 && name ? name : typeid(T).name()) +
                                         " (no operator<< or mime_bundle_repr to show it)"}};
    std::free(name);
  }
  attn_kernel_execute_result(dump(bundle).c_str());
}

}  // namespace detail

template <class T>
void display(const T& x) {
  attn_kernel_display(detail::dump(detail::bundle_of(x)).c_str(), "{}", "{}", 0);
}

// With a display id: update=true replaces the output shown earlier under that id.
template <class T>
void display(const T& x, const std::string& display_id, bool update = false) {
  attn_kernel_display(detail::dump(detail::bundle_of(x)).c_str(), "{}",
                      detail::dump(nl::json{{"display_id", display_id}}).c_str(), update ? 1 : 0);
}

inline void clear_output(bool wait = false) { attn_kernel_clear_output(wait ? 1 : 0); }

}  // namespace xcpp
