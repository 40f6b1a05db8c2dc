# Perl runtime (Debian's perl, ithreads, the system malloc): hashes, sort,
# sprintf, regexes and 2 threads, with a deterministic output; exit status 9.
# The repeat operator in make_strings builds 300 strings of 100001..100300
# characters: 300 buffers grown by Perl_sv_grow under Perl_pp_repeat.
use strict;
use warnings;
use threads;

sub make_strings { return map { "x" x (100000 + $_) } 1 .. 300 }

sub count_words {
    my ($k) = @_;
    my %count;
    for my $i (1 .. 5000 * ($k + 1)) {
        my $word = sprintf "w%x", ($i * 7919) % 4099;
        $count{$word}++;
    }
    my @top = (sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count)[0 .. 2];
    return "thread $k: " . scalar(keys %count) . " words, top @top";
}

my @threads = map { threads->create(\&count_words, $_) } 0 .. 1;
my @strings = make_strings();
my $total = 0;
$total += length for @strings;
my @lines = map { $_->join } @threads;
print "$_\n" for @lines;
print "strings: ", scalar(@strings), ", $total characters\n";
my $matches = grep { /^w[0-9a-f]*7$/ } map { sprintf "w%x", $_ } 1 .. 10000;
print "matches: $matches\n";
exit 9;
