#include "../helpers.hpp"

#include <cctype>
#include <optional>
#include <set>

using namespace attn::data;

namespace {

// What each of the 12 formats writes for a few dates, written out by hand.
struct Row {
  Date date;
  std::vector<std::string> texts;  // in the order of date_formats()
};
const std::vector<Row> table = {
    {{2021, 3, 3},
     {"3 March 2021", "March 3, 2021", "03/03/2021", "2021.03.03", "Wed, Mar 3 2021", "3rd of march 21", "03-03-21",
      "Wednesday 3 March 2021", "20210303", "3.3.2021", "MAR 03 2021", "march 3rd, 2021"}},
    {{1999, 12, 22},
     {"22 December 1999", "December 22, 1999", "22/12/1999", "1999.12.22", "Wed, Dec 22 1999", "22nd of december 99",
      "22-12-99", "Wednesday 22 December 1999", "19991222", "22.12.1999", "DEC 22 1999", "december 22nd, 1999"}},
    {{2004, 2, 29},
     {"29 February 2004", "February 29, 2004", "29/02/2004", "2004.02.29", "Sun, Feb 29 2004", "29th of february 04",
      "29-02-04", "Sunday 29 February 2004", "20040229", "29.2.2004", "FEB 29 2004", "february 29th, 2004"}},
    {{2001, 1, 1},
     {"1 January 2001", "January 1, 2001", "01/01/2001", "2001.01.01", "Mon, Jan 1 2001", "1st of january 01",
      "01-01-01", "Monday 1 January 2001", "20010101", "1.1.2001", "JAN 01 2001", "january 1st, 2001"}},
    {{1987, 11, 11},
     {"11 November 1987", "November 11, 1987", "11/11/1987", "1987.11.11", "Wed, Nov 11 1987", "11th of november 87",
      "11-11-87", "Wednesday 11 November 1987", "19871111", "11.11.1987", "NOV 11 1987", "november 11th, 1987"}},
};

const char* const months[] = {"january", "february", "march",     "april",   "may",      "june",
                              "july",    "august",   "september", "october", "november", "december"};
const char* const weekdays[] = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// An independent reader of the formats, written for the test: reads `text`
// following `pattern` and returns the date, or nothing if the text does not fit.
std::optional<Date> parse(const std::string& text, const std::string& pattern, int min_year) {
  Date d{0, 0, 0};
  int weekday = -1;
  std::size_t i = 0;
  auto digits = [&](std::size_t min_n, std::size_t max_n) -> std::optional<int> {
    std::size_t n = 0;
    while (n < max_n && i + n < text.size() && std::isdigit(static_cast<unsigned char>(text[i + n]))) ++n;
    if (n < min_n) return std::nullopt;
    const int value = std::stoi(text.substr(i, n));
    i += n;
    return value;
  };
  auto word = [&] {
    std::size_t n = 0;
    while (i + n < text.size() && std::isalpha(static_cast<unsigned char>(text[i + n]))) ++n;
    std::string w = lower(text.substr(i, n));
    i += n;
    return w;
  };
  auto name_index = [](const std::string& w, const char* const* names, int count) {
    for (int k = 0; k < count; ++k)
      if (w == names[k] || (w.size() == 3 && w == std::string(names[k]).substr(0, 3))) return k;
    return -1;
  };
  for (std::size_t p = 0; p < pattern.size(); ++p) {
    if (pattern[p] != '%') {
      if (i >= text.size() || text[i] != pattern[p]) return std::nullopt;
      ++i;
      continue;
    }
    std::optional<int> v;
    switch (pattern[++p]) {
      case 'Y': v = digits(4, 4); if (v) d.year = *v; break;
      case 'y':
        v = digits(2, 2);
        if (v) d.year = min_year - min_year % 100 + *v < min_year ? min_year - min_year % 100 + *v + 100
                                                                   : min_year - min_year % 100 + *v;
        break;
      case 'm': v = digits(2, 2); if (v) d.month = *v; break;
      case 'n': v = digits(1, 2); if (v) d.month = *v; break;
      case 'd': v = digits(2, 2); if (v) d.day = *v; break;
      case 'e': v = digits(1, 2); if (v) d.day = *v; break;
      case 'o': v = digits(1, 2); if (v) d.day = *v; word(); break;
      case 'B': case 'b': case 'L': case 'U': d.month = name_index(word(), months, 12) + 1; v = d.month; break;
      case 'A': case 'a': weekday = name_index(word(), weekdays, 7); v = weekday; break;
    }
    if (!v || *v < 0) return std::nullopt;
  }
  if (i != text.size() || !is_valid(d)) return std::nullopt;
  if (weekday >= 0 && weekday != day_of_week(d)) return std::nullopt;
  return d;
}

}  // namespace

TEST_CASE("calendar arithmetic agrees with Python's datetime") {
  CHECK(days_since_epoch({1970, 1, 1}) == 0);
  CHECK(days_since_epoch({2000, 3, 1}) == 11017);
  CHECK(days_since_epoch({2021, 3, 3}) == 18689);
  CHECK(days_since_epoch({1950, 1, 1}) == -7305);
  CHECK(days_since_epoch({1, 1, 1}) == -719162);
  CHECK(days_since_epoch({9999, 12, 31}) == 2932896);
  CHECK(day_of_week({2021, 3, 3}) == 2);  // Wednesday
  CHECK(day_of_week({1950, 1, 1}) == 6);  // Sunday
  CHECK(day_of_week({1, 1, 1}) == 0);     // Monday
  for (std::int64_t days = -719162; days <= 2932896; days += 997) {  // 0001-01-01 .. 9999-12-31
    const Date d = date_from_days(days);
    REQUIRE(is_valid(d));
    CHECK(days_since_epoch(d) == days);
  }
  CHECK(is_leap_year(2000));
  CHECK_FALSE(is_leap_year(1900));
  CHECK(days_in_month(2004, 2) == 29);
  CHECK_FALSE(is_valid({2003, 2, 29}));
  CHECK(iso({987, 6, 5}) == "0987-06-05");
}

TEST_CASE("every format writes the known text for the known dates") {
  REQUIRE(date_formats().size() == 12);
  for (const Row& row : table) {
    for (std::size_t f = 0; f < date_formats().size(); ++f) {
      const std::string& pattern = date_formats()[f];
      INFO(pattern << " " << iso(row.date));
      CHECK(format_date(row.date, pattern).text == row.texts[f]);
      const Example e = date_example(row.date, pattern);
      CHECK(join(e.src, "") == row.texts[f]);
      CHECK(join(e.tgt, "") == iso(row.date));
      // ...and reads back as the same date.
      const auto back = parse(row.texts[f], pattern, 1950);
      REQUIRE(back.has_value());
      CHECK(*back == row.date);
    }
  }
}

TEST_CASE("random dates in every format parse back to their ISO target") {
  attn::Generator gen(11);
  DateTaskOptions options;
  for (const std::string& pattern : date_formats()) {
    DateTaskOptions one = options;
    one.formats = {pattern};
    for (const Example& e : date_task(200, one, gen)) {
      const auto back = parse(join(e.src, ""), pattern, options.min_year);
      REQUIRE_MESSAGE(back.has_value(), join(e.src, "") << " does not read as " << pattern);
      CHECK(iso(*back) == join(e.tgt, ""));
      CHECK(back->year >= 1950);
      CHECK(back->year <= 2049);
    }
  }
}

TEST_CASE("date alignments by hand") {
  // "3rd of march 21": 3 at 0, "march" at 7, "21" at 13..14.
  CHECK(date_example({2021, 3, 3}, "%o of %L %y").alignment ==
        std::vector<std::int64_t>{-1, -1, 13, 14, -1, 7, 7, -1, -1, 0});
  CHECK(date_example({2021, 3, 3}, "%Y%m%d").alignment == std::vector<std::int64_t>{0, 1, 2, 3, -1, 4, 5, -1, 6, 7});
  // "December 22, 1999": month name at 0, day at 9..10, year at 13..16.
  CHECK(date_example({1999, 12, 22}, "%B %e, %Y").alignment ==
        std::vector<std::int64_t>{13, 14, 15, 16, -1, 0, 0, -1, 9, 10});
  const WrittenDate w = format_date({2021, 3, 3}, "%a, %b %e %Y");  // "Wed, Mar 3 2021"
  CHECK(w.year == std::vector<std::int64_t>{11, 12, 13, 14});
  CHECK(w.month == std::vector<std::int64_t>{5, 5});
  CHECK(w.day == std::vector<std::int64_t>{9});
}

TEST_CASE("gold alignments point at the right characters") {
  attn::Generator gen(12);
  for (const std::string& pattern : date_formats()) {
    const bool short_year = pattern.find("%y") != std::string::npos;
    DateTaskOptions one;
    one.formats = {pattern};
    for (const Example& e : date_task(100, one, gen)) {
      REQUIRE(e.alignment.size() == 10);
      const std::string src = join(e.src, ""), tgt = join(e.tgt, "");
      INFO(src << " -> " << tgt);
      for (std::size_t t = 0; t < 10; ++t) {
        const std::int64_t j = e.alignment[t];
        if (t == 4 || t == 7) {
          CHECK(j == -1);  // the dashes
        } else if (j == -1) {
          // Only the century of a 2-digit year and leading zeros are missing.
          CHECK(((t <= 1 && short_year) || ((t == 5 || t == 8) && tgt[t] == '0')));
        } else if (std::isalpha(static_cast<unsigned char>(src[j]))) {
          // A month name: the word starting there names the target's month.
          CHECK((t == 5 || t == 6));
          CHECK((j == 0 || !std::isalpha(static_cast<unsigned char>(src[j - 1]))));
          CHECK(lower(src.substr(j, 3)) == std::string(months[std::stoi(tgt.substr(5, 2)) - 1]).substr(0, 3));
        } else {
          CHECK(src[j] == tgt[t]);  // the same digit
        }
      }
    }
  }
}

TEST_CASE("held-out dates never appear in training, in any format") {
  attn::Generator gen(13);
  DateTaskOptions options;
  const Split split = date_split(5000, 500, options, gen);
  CHECK(split.train.size() == 5000);
  CHECK(split.test.size() == 500);
  std::set<Tokens> test_dates;
  for (const auto& e : split.test) test_dates.insert(e.tgt);
  CHECK(test_dates.size() == 500);
  for (const auto& e : split.train) CHECK(test_dates.count(e.tgt) == 0);
  // Both sides use many formats.
  std::set<std::size_t> lengths;
  for (const auto& e : split.train) lengths.insert(e.src.size());
  CHECK(lengths.size() >= 8);
}

TEST_CASE("the fixed vocabularies cover every example") {
  attn::Generator gen(14);
  const Vocab src_vocab = date_source_vocab(), tgt_vocab = date_target_vocab();
  CHECK(tgt_vocab.size() == 4 + 11);
  for (const Example& e : date_task(500, {}, gen)) {
    CHECK_NOTHROW(src_vocab.encode(e.src, /*strict=*/true));
    CHECK_NOTHROW(tgt_vocab.encode(e.tgt, true));
  }
}

TEST_CASE("date tasks are reproducible from the seed") {
  attn::Generator a(3), b(3), c(4);
  const auto xa = date_task(30, {}, a), xb = date_task(30, {}, b), xc = date_task(30, {}, c);
  CHECK(sources(xa) == sources(xb));
  CHECK(sources(xa) != sources(xc));
}

TEST_CASE("bad dates, patterns and options are rejected") {
  attn::Generator gen(0);
  CHECK_THROWS_WITH_SUBSTR(format_date({2021, 2, 29}, "%Y"), attn::ValueError, "2021-02-29");
  CHECK_THROWS_WITH_SUBSTR(format_date({2021, 2, 1}, "%Q"), attn::ValueError, "'%Q'");
  CHECK_THROWS_WITH_SUBSTR(format_date({2021, 2, 1}, "%Y%"), attn::ValueError, "lone '%'");
  CHECK(format_date({2021, 2, 1}, "100%% %Y").text == "100% 2021");
  DateTaskOptions options;
  options.formats = {"%d/%m"};
  CHECK_THROWS_WITH_SUBSTR(date_task(1, options, gen), attn::ValueError, "'%d/%m' must write the year");
  options = {};
  options.min_year = 1900;  // 150 years: "21" could be 1921 or 2021
  CHECK_THROWS_WITH_SUBSTR(date_task(1, options, gen), attn::ValueError, "at most 100 years");
  options.formats = {"%Y-%m-%d"};
  CHECK_NOTHROW(date_task(1, options, gen));
  options.min_year = 2050;
  CHECK_THROWS_WITH_SUBSTR(date_task(1, options, gen), attn::ValueError, "min_year <= max_year");
  options = {};
  options.min_year = options.max_year = 2020;  // 366 days
  CHECK_THROWS_WITH_SUBSTR(date_split(1, 366, options, gen), attn::ValueError, "366 held-out days");
  CHECK(date_split(10, 365, options, gen).train.size() == 10);
}
