#!/usr/bin/perl
# Doxygen's INPUT_FILTER for attn's headers (docs/Doxyfile).
#
# attn documents each declaration with plain // comments. This filter turns a
# line that starts with // (an empty // too) into a /// doc comment, and escapes what Doxygen
# would misread in it, outside `code spans` (which Doxygen shows verbatim):
#   <eos>, <pad> ...   would be taken for unknown HTML tags  -> \<eos\>
#   \x93NUMPY, \r\n    would be taken for unknown commands   -> \\x93NUMPY
# Code lines, and comments after code on the same line, are left alone.
use strict;
use warnings;

while (my $line = <>) {
  if ($line =~ s{^(\s*)//(?!/)}{$1///}) {
    my @parts = split /(`[^`]*`)/, $line;
    for (@parts) {
      next if /^`/;
      s/\\/\\\\/g;
      s/<(\/?[A-Za-z_][\w.]*)>/\\<$1\\>/g;
    }
    $line = join '', @parts;
  }
  print $line;
}
