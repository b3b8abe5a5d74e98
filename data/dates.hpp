// Date normalization: a date written by a human, read one character at a time,
// rewritten in ISO form. A classic first attention task (the source is long,
// the target short, and the alignment is known):
//
//   "Wed, Mar 3 2021"  ->  "2021-03-03"
//   "3rd of march 21"  ->  "2021-03-03"
//
// Formats are patterns in the spirit of strftime:
//   %Y 2021   %y 21 (then the year range may span at most 100 years)
//   %m 03     %n 3      %B March   %b Mar   %L march   %U MAR
//   %d 03     %e 3      %o 3rd     %A Wednesday       %a Wed      %% a '%'
// Every other character is copied as it is.
//
// Alignment: output character t of "YYYY-MM-DD" points at the source character
// of the same field it comes from. Digits match digits from the right, so in
// "3 March 21" the day "03" aligns as (-1, 0): the leading 0 and the century "20"
// exist nowhere in the source. A month name counts as two digits, both at its
// first letter. The dashes align with nothing (-1).
#pragma once

#include "../core/random.hpp"
#include "example.hpp"
#include "vocab.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace attn::data {

struct Date {
  int year = 2000;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
  bool operator==(const Date& o) const { return year == o.year && month == o.month && day == o.day; }
  bool operator!=(const Date& o) const { return !(*this == o); }
};

bool is_leap_year(int year);
int days_in_month(int year, int month);
bool is_valid(const Date& date);
// Days since 1970-01-01 (negative before) and back: turns a random integer into a date.
std::int64_t days_since_epoch(const Date& date);
Date date_from_days(std::int64_t days);
int day_of_week(const Date& date);  // 0 = Monday .. 6 = Sunday
std::string iso(const Date& date);  // "2021-03-03"

// A date in a pattern, and where the digits of each field landed in the text
// (character positions: the formats write ASCII only).
struct WrittenDate {
  std::string text;
  std::vector<std::int64_t> year, month, day;
};
WrittenDate format_date(const Date& date, const std::string& pattern);

// The task's formats (12 of them), e.g. "%e %B %Y" for "3 March 2021".
const std::vector<std::string>& date_formats();

// The example for one date in one pattern: character tokens, ISO target, alignment.
Example date_example(const Date& date, const std::string& pattern);

struct DateTaskOptions {
  int min_year = 1950;  // dates are drawn uniformly between
  int max_year = 2049;  // min_year-01-01 and max_year-12-31
  std::vector<std::string> formats = date_formats();  // each example picks one at random
};

// Fixed vocabularies, so every split and every run agrees on the ids: the
// source holds digits, letters and " ,./-"; the target digits and "-".
Vocab date_source_vocab();
Vocab date_target_vocab();

std::vector<Example> date_task(std::size_t n, const DateTaskOptions& options, Generator& gen);

// Held-out dates: n_test distinct days are drawn for the test set, and no
// training example is any of those days, in any format.
Split date_split(std::size_t n_train, std::size_t n_test, const DateTaskOptions& options, Generator& gen);

}  // namespace attn::data
