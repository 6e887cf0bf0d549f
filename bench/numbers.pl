#!/usr/bin/perl -w
# The generator of seed 000 (shared/seeds/000_*.txt), verbatim: the reference oracle for
# `lamina gen numbers N`. Prints `store N "words"` for N = 0..N (N+1 lines; 1000000 if N is 0).
use strict;
use integer;

my @number = qw(
    undef     one      two      three   four  five
    six       seven    eight    nine    ten   eleven
    twelve    thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen
);
my @tens = qw(x x twenty thirty forty fifty sixty seventy eighty ninety);
my @multiplier = (undef, 'thousand,', 'million,', 'billion,');

for (my $N=0; $N <= ($ARGV[0] ? $ARGV[0] : 1000000); $N++) {
    my $text = '';

    # Handle zero as a special case
    print("store 0 \"zero\"\n"), next if $N == 0;

    # Process the number in groups of three, right-to-left
    my ($Q, $exponent, $j) = ($N, 0, 0);
    while ($Q) {
        my $group = $Q % 1000;

        # Add "thousand" or "million" if needed ($j tells us if we need a trailing comma)
        $text = ($j ? $multiplier[$exponent] : substr($multiplier[$exponent], 0, -1))." $text"
            if $exponent && $group;

        # Determine the words for the last two digits of the group
        $j = $group % 100;
        $text = ($j >= 20 ? $tens[$j/10] . ($j % 10 ? '-' . $number[$j % 10] : '')
            : $number[$j]) . " $text" if $j;

        # Determine the hundreds
        $text = ($number[$group/100] . ' hundred')." $text" if $group > 99;

        # Move to the next group of thousands
        $Q /= 1000;
        $exponent++;
        $j = $group;    # (use j to pass this group's value to the next iteration)
    }
    my $sp = '';
    print "store $N \"", substr($text,0,-1), "\"\n";
}
