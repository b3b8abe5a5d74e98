#include "dates.hpp"

#include "../core/errors.hpp"

#include <cctype>
#include <cstdio>
#include <set>

namespace attn::data {

namespace {
const char* const month_names[] = {"January", "February", "March",     "April",   "May",      "June",
                                   "July",    "August",   "September", "October", "November", "December"};
const char* const weekday_names[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
const char* ordinal_suffix(int day) {
  if (day % 100 >= 11 && day % 100 <= 13) return "th";  // 11th, 12th, 13th
  switch (day % 10) {
    case 1: return "st";
    case 2: return "nd";
    case 3: return "rd";
    default: return "th";
  }
}
}  // namespace

bool is_leap_year(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int days_in_month(int year, int month) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap_year(year) ? 29 : days[month - 1];
}

bool is_valid(const Date& d) {
  return d.year >= 1 && d.year <= 9999 && d.month >= 1 && d.month <= 12 && d.day >= 1 &&
         d.day <= days_in_month(d.year, d.month);
}

// Howard Hinnant's days_from_civil: count in 400-year eras of 146097 days,
// with years starting in March so that the leap day comes last.
std::int64_t days_since_epoch(const Date& date) {
  const std::int64_t y = date.year - (date.month <= 2), m = date.month, d = date.day;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;                                  // year of era, 0..399
  const std::int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // day of the March-based year
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;          // day of era
  return era * 146097 + doe - 719468;
}

Date date_from_days(std::int64_t days) {
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {static_cast<int>(yoe + era * 400 + (month <= 2)), month, static_cast<int>(doy - (153 * mp + 2) / 5 + 1)};
}

int day_of_week(const Date& date) {
  const std::int64_t w = (days_since_epoch(date) + 3) % 7;  // 1970-01-01 was a Thursday (3)
  return static_cast<int>(w < 0 ? w + 7 : w);
}

std::string iso(const Date& date) {
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d", date.year, date.month, date.day);
  return text;
}

WrittenDate format_date(const Date& date, const std::string& pattern) {
  if (!is_valid(date)) throw ValueError("format_date: invalid date " + iso(date));
  WrittenDate out;
  // Appends a number, zero-padded to `width`, and records where its digits went.
  auto number = [&](int value, int width, std::vector<std::int64_t>& positions) {
    std::string digits = std::to_string(value);
    if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
    for (char c : digits) {
      positions.push_back(static_cast<std::int64_t>(out.text.size()));
      out.text += c;
    }
  };
  // Appends a month name; it counts as two "digits", both at its first letter.
  auto month_name = [&](const std::string& name) {
    out.month = {static_cast<std::int64_t>(out.text.size()), static_cast<std::int64_t>(out.text.size())};
    out.text += name;
  };
  const std::string month = month_names[date.month - 1], weekday = weekday_names[day_of_week(date)];
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out.text += pattern[i];
      continue;
    }
    if (++i == pattern.size()) throw ValueError("format_date: pattern '" + pattern + "' ends with a lone '%'");
    switch (pattern[i]) {
      case 'Y': number(date.year, 4, out.year); break;
      case 'y': number(date.year % 100, 2, out.year); break;
      case 'm': number(date.month, 2, out.month); break;
      case 'n': number(date.month, 1, out.month); break;
      case 'B': month_name(month); break;
      case 'b': month_name(month.substr(0, 3)); break;
      case 'L': month_name(lower(month)); break;
      case 'U': month_name(upper(month.substr(0, 3))); break;
      case 'd': number(date.day, 2, out.day); break;
      case 'e': number(date.day, 1, out.day); break;
      case 'o': number(date.day, 1, out.day); out.text += ordinal_suffix(date.day); break;
      case 'A': out.text += weekday; break;
      case 'a': out.text += weekday.substr(0, 3); break;
      case '%': out.text += '%'; break;
      default:
        throw ValueError("format_date: unknown code '%" + std::string(1, pattern[i]) + "' in pattern '" + pattern + "'");
    }
  }
  return out;
}

const std::vector<std::string>& date_formats() {
  static const std::vector<std::string> formats = {
      "%e %B %Y",      // 3 March 2021
      "%B %e, %Y",     // March 3, 2021
      "%d/%m/%Y",      // 03/03/2021 (day first, as in Europe)
      "%Y.%m.%d",      // 2021.03.03
      "%a, %b %e %Y",  // Wed, Mar 3 2021
      "%o of %L %y",   // 3rd of march 21
      "%d-%m-%y",      // 03-03-21
      "%A %e %B %Y",   // Wednesday 3 March 2021
      "%Y%m%d",        // 20210303
      "%e.%n.%Y",      // 3.3.2021
      "%U %d %Y",      // MAR 03 2021
      "%L %o, %Y",     // march 3rd, 2021
  };
  return formats;
}

Example date_example(const Date& date, const std::string& pattern) {
  const WrittenDate written = format_date(date, pattern);
  Example e{split_chars(written.text), split_chars(iso(date)), std::vector<std::int64_t>(10, -1)};
  // Digits match from the right: ISO field [first, first + width) <- source positions.
  auto align = [&](std::size_t first, std::size_t width, const std::vector<std::int64_t>& positions) {
    for (std::size_t k = 0; k < width && k < positions.size(); ++k)
      e.alignment[first + width - 1 - k] = positions[positions.size() - 1 - k];
  };
  align(0, 4, written.year);  // YYYY-MM-DD: year at 0..3, month at 5..6, day at 8..9
  align(5, 2, written.month);
  align(8, 2, written.day);
  return e;
}

Vocab date_source_vocab() {
  Vocab v;
  for (char c : std::string("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ ,./-")) v.add(std::string(1, c));
  return v;
}

Vocab date_target_vocab() { return Vocab(split_chars("0123456789-")); }

namespace {

void check_options(const char* op, const DateTaskOptions& o) {
  if (o.min_year < 1 || o.max_year > 9999 || o.min_year > o.max_year)
    throw ValueError(std::string(op) + ": expected 1 <= min_year <= max_year <= 9999, got " +
                     std::to_string(o.min_year) + ".." + std::to_string(o.max_year));
  if (o.formats.empty()) throw ValueError(std::string(op) + ": expected at least one format");
  for (const auto& f : o.formats) {
    const WrittenDate w = format_date({2000, 1, 1}, f);
    if (w.year.empty() || w.month.empty() || w.day.empty())
      throw ValueError(std::string(op) + ": format '" + f + "' must write the year, the month and the day");
    // "21" is 2021 or 1921: only a range of at most 100 years makes it unambiguous.
    if (w.year.size() == 2 && o.max_year - o.min_year >= 100)
      throw ValueError(std::string(op) + ": format '" + f + "' writes a 2-digit year, so the years " +
                       std::to_string(o.min_year) + ".." + std::to_string(o.max_year) +
                       " must span at most 100 years");
  }
}

Example random_example(std::int64_t days, const DateTaskOptions& o, Generator& gen) {
  const auto& pattern = o.formats[static_cast<std::size_t>(gen.randint(0, static_cast<std::int64_t>(o.formats.size())))];
  return date_example(date_from_days(days), pattern);
}

}  // namespace

std::vector<Example> date_task(std::size_t n, const DateTaskOptions& options, Generator& gen) {
  check_options("date_task", options);
  const std::int64_t first = days_since_epoch({options.min_year, 1, 1});
  const std::int64_t last = days_since_epoch({options.max_year, 12, 31});
  std::vector<Example> examples;
  for (std::size_t i = 0; i < n; ++i) examples.push_back(random_example(gen.randint(first, last + 1), options, gen));
  return examples;
}

Split date_split(std::size_t n_train, std::size_t n_test, const DateTaskOptions& options, Generator& gen) {
  check_options("date_split", options);
  const std::int64_t first = days_since_epoch({options.min_year, 1, 1});
  const std::int64_t last = days_since_epoch({options.max_year, 12, 31});
  const auto available = static_cast<std::size_t>(last - first + 1);
  if (n_test > available || (n_train > 0 && n_test == available))
    throw ValueError("date_split: " + std::to_string(n_test) + " held-out days leave no training days in " +
                     std::to_string(options.min_year) + ".." + std::to_string(options.max_year));
  Split split;
  std::set<std::int64_t> held_out;
  while (held_out.size() < n_test) {
    const std::int64_t days = gen.randint(first, last + 1);
    if (held_out.insert(days).second) split.test.push_back(random_example(days, options, gen));
  }
  while (split.train.size() < n_train) {
    const std::int64_t days = gen.randint(first, last + 1);
    if (!held_out.count(days)) split.train.push_back(random_example(days, options, gen));
  }
  return split;
}

}  // namespace attn::data
