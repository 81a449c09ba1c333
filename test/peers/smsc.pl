#!/usr/bin/perl
# A small SMSC built on Debian's Net::SMPP (libnet-smpp-perl), so that the smpp provider is tested against
# an SMPP implementation this project did not write.
#
# Usage: perl smsc.pl SYSTEM_ID PASSWORD [PORT]
# Listens on 127.0.0.1 on PORT (default: a free one; a second run on the same port is the SMSC restarted, its
# message ids starting again at M1) and prints {"event":"listening","port":N}; then one JSON line per PDU it
# receives. Answers bind_transceiver (ESME_RINVPASWD for wrong credentials), submit_sm (message ids M1, M2, ...)
# and, when the submit_sm asks for one, sends a delivery receipt deliver_sm right after the submit_sm_resp:
# for odd ids with the receipted_message_id TLV and the text, for even ids with the text only. A destination
# ending in 99 gets stat:UNDELIV, one ending in 98 no receipt at all, every other stat:DELIVRD. With
# SMSC_SUBMIT_DELAY_MS set, each submit_sm_resp (and its receipt) goes out that long after the submit_sm came: an
# SMSC that answers late. Exits by itself after 60 seconds.
use strict;
use warnings;
use Net::SMPP;
use JSON::PP;
use IO::Handle;

my ($system_id, $password, $port) = @ARGV;
die "usage: smsc.pl SYSTEM_ID PASSWORD [PORT]\n" unless defined $password;
my $submit_delay = ($ENV{SMSC_SUBMIT_DELAY_MS} // 0) / 1000;
STDOUT->autoflush(1);
$SIG{ALRM} = sub { exit 0 };
alarm 60;

my $json = JSON::PP->new->canonical;
sub say_event { print $json->encode({@_}), "\n" }

my $listener = Net::SMPP->new_listen('127.0.0.1', port => $port // 0, smpp_version => 0x34)
  or die "cannot listen: $!";
say_event(event => 'listening', port => $listener->sockport);

my $next_id = 0;
while (1) {
  my $c = $listener->accept or next;
  say_event(event => 'connected');
  while (my $pdu = $c->read_pdu) {
    my $cmd = $pdu->{cmd};
    if ($cmd == 0x00000009) {    # bind_transceiver
      my $ok = $pdu->{system_id} eq $system_id && $pdu->{password} eq $password;
      say_event(event => 'bind_transceiver', system_id => $pdu->{system_id}, ok => $ok ? JSON::PP::true : JSON::PP::false,
        interface_version => $pdu->{interface_version});
      $c->bind_transceiver_resp(system_id => 'PERLSMSC', seq => $pdu->{seq}, status => $ok ? 0 : 0x0E);
    } elsif ($cmd == 0x00000004) {    # submit_sm
      my $id = 'M' . ++$next_id;
      say_event(event => 'submit_sm', message_id => $id,
        source_addr_ton => $pdu->{source_addr_ton}, source_addr_npi => $pdu->{source_addr_npi}, source_addr => $pdu->{source_addr},
        dest_addr_ton => $pdu->{dest_addr_ton}, dest_addr_npi => $pdu->{dest_addr_npi}, destination_addr => $pdu->{destination_addr},
        esm_class => $pdu->{esm_class}, data_coding => $pdu->{data_coding}, registered_delivery => $pdu->{registered_delivery},
        short_message_hex => unpack('H*', $pdu->{short_message}));
      select(undef, undef, undef, $submit_delay) if $submit_delay > 0;
      $c->submit_sm_resp(message_id => $id, seq => $pdu->{seq});
      say_event(event => 'submit_sm_resp', message_id => $id) if $submit_delay > 0;
      next unless $pdu->{registered_delivery} & 1;
      next if $pdu->{destination_addr} =~ /98$/;
      my $stat = $pdu->{destination_addr} =~ /99$/ ? 'UNDELIV' : 'DELIVRD';
      my $err = $stat eq 'DELIVRD' ? '000' : '001';
      my $text = "id:$id sub:001 dlvrd:" . ($stat eq 'DELIVRD' ? '001' : '000')
        . " submit date:2611231500 done date:2611231501 stat:$stat err:$err text:";
      my @tlv = ($next_id % 2) ? (receipted_message_id => "$id\0", message_state => pack('C', $stat eq 'DELIVRD' ? 2 : 5)) : ();
      my $seq = $c->deliver_sm(
        source_addr_ton => 1, source_addr_npi => 1, source_addr => $pdu->{destination_addr},
        dest_addr_ton => $pdu->{source_addr_ton}, dest_addr_npi => $pdu->{source_addr_npi}, destination_addr => $pdu->{source_addr},
        esm_class => 0x04, data_coding => 0, short_message => $text, @tlv, async => 1);
      say_event(event => 'deliver_sm', message_id => $id, seq => $seq, stat => $stat, tlv => @tlv ? JSON::PP::true : JSON::PP::false);
    } elsif ($cmd == 0x80000005) {    # deliver_sm_resp
      say_event(event => 'deliver_sm_resp', seq => $pdu->{seq}, status => $pdu->{status});
    } elsif ($cmd == 0x00000015) {    # enquire_link
      say_event(event => 'enquire_link');
      $c->enquire_link_resp(seq => $pdu->{seq});
    } elsif ($cmd == 0x00000006) {    # unbind
      say_event(event => 'unbind');
      $c->unbind_resp(seq => $pdu->{seq});
      last;
    } else {
      say_event(event => 'other', cmd => sprintf('0x%08x', $cmd));
      $c->generic_nack(seq => $pdu->{seq}, status => 0x03) unless $cmd & 0x80000000;
    }
  }
  say_event(event => 'closed');
  close $c;
}
