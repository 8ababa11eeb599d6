#!/usr/bin/env bash
# Every numeric or list flag of every `switchyard` command, given a bad value,
# must end with exit code 2 (a usage error, not a signal, not a load failure)
# and a message naming the flag, the value and what is accepted.
# usage: bad_flags.sh SWITCHYARD_BINARY MODEL.onnx
set -u
bin=$1
model=$2
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

# A usage error: exit code 2, a message naming the flag, value and range.
expect_error() { expect 2 "$@"; }
# The edges of each range are accepted.
expect_ok() { expect 0 "$@"; }

runs="--runs must be an integer from 1 to 10000000; got"
for cmd in run bench; do
  expect_error "$runs 'abc'" $cmd "$model" --runs abc
  expect_error "$runs '-5'" $cmd "$model" --runs -5
  expect_error "$runs '0'" $cmd "$model" --runs 0
  expect_error "$runs '10000001'" $cmd "$model" --runs 10000001
  expect_error "$runs '99999999999999999999'" $cmd "$model" --runs 99999999999999999999
  expect_error "$runs ''" $cmd "$model" --runs ""
  expect_error "$runs '1.5'" $cmd "$model" --runs 1.5
  expect_error "$runs ' 5'" $cmd "$model" "--runs= 5"
  expect_error "$runs '5x'" $cmd "$model" --runs 5x
  expect_error "$runs '\+5'" $cmd "$model" --runs +5
  expect_error "--runs needs a value" $cmd "$model" --runs
  seed="--seed must be an integer from 0 to 4294967295; got"
  expect_error "$seed 'abc'" $cmd "$model" --seed abc
  expect_error "$seed '-1'" $cmd "$model" --seed -1
  expect_error "$seed '4294967296'" $cmd "$model" --seed 4294967296
  dim="--dim batch must be an integer from 0 to 2147483648; got"
  expect_error "$dim 'abc'" $cmd "$model" --dim batch=abc
  expect_error "$dim '-1'" $cmd "$model" --dim batch=-1
  expect_error "$dim '2147483649'" $cmd "$model" --dim batch=2147483649
  expect_error "$dim ''" $cmd "$model" --dim batch=
  expect_error "--dim takes SYMBOL=VALUE" $cmd "$model" --dim 5
done

for cmd in run bench inspect doctor; do
  threads="--threads must be an integer from 0 to 1024; got"
  expect_error "$threads 'abc'" $cmd "$model" --threads abc
  expect_error "$threads '-1'" $cmd "$model" --threads -1
  expect_error "$threads '100000'" $cmd "$model" --threads 100000
  expect_error "$threads '9223372036854775808'" $cmd "$model" --threads 9223372036854775808
  providers="--providers takes a comma-separated list of provider names with no empty item; got"
  expect_error "$providers ''" $cmd "$model" --providers ""
  expect_error "$providers 'cpu,,cuda'" $cmd "$model" --providers cpu,,cuda
  expect_error "$providers 'cpu,'" $cmd "$model" --providers cpu,
  expect_error "--strict takes no value; got '--strict=0'" $cmd "$model" --strict=0
  expect_error "unknown option --bogus; accepted:" $cmd "$model" --bogus 1
  expect_error "--min-partition-size must be an integer from 0 to 1000000; got 'abc'" \
    $cmd "$model" --min-partition-size abc
done

for cmd in run bench inspect; do
  expect_error "--max-partitions must be an integer from 0 to 1000000; got '-1'" $cmd "$model" --max-partitions -1
  expect_error "--max-copies must be an integer from -1 to 1000000; got '-2'" $cmd "$model" --max-copies -2
  expect_error "--max-copies must be an integer from -1 to 1000000; got '1e3'" $cmd "$model" --max-copies 1e3
done

warmup="--warmup must be an integer from 0 to 1000000; got"
expect_error "$warmup 'abc'" bench "$model" --warmup abc
expect_error "$warmup '-1'" bench "$model" --warmup -1
expect_error "$warmup '1000001'" bench "$model" --warmup 1000001
batch="--batch must be an integer from 1 to 2147483648; got"
expect_error "$batch 'abc'" bench "$model" --batch abc
expect_error "$batch '0'" bench "$model" --batch 0
expect_error "$batch '2147483649'" bench "$model" --batch 2147483649
expect_error "$batch '-9223372036854775809'" bench "$model" --batch -9223372036854775809
seconds="--seconds must be a number from 0 to 86400; got"
expect_error "$seconds 'abc'" bench "$model" --seconds abc
expect_error "$seconds '-1'" bench "$model" --seconds -1
expect_error "$seconds '86401'" bench "$model" --seconds 86401
expect_error "$seconds 'nan'" bench "$model" --seconds nan
expect_error "$seconds 'inf'" bench "$model" --seconds inf
expect_error "$seconds '1e999'" bench "$model" --seconds 1e999
expect_error "$seconds ''" bench "$model" --seconds ""
expect_error "$seconds '0x10'" bench "$model" --seconds 0x10
expect_error "--io-binding: expected cpu, cuda or cuda:N with N from 0 to 1023; got 'cuda: 1'" \
  bench "$model" --io-binding "cuda: 1"

# A misspelt symbol would leave the real one at 1; a repeated flag would
# count only once.
expect_error "--dim batchh: no input of the model has a symbolic dimension of that name; its symbols are: batch" \
  run "$model" --dim batchh=8
expect_error "--runs is given twice \('5' and '7'\); it takes one value" run "$model" --runs 5 --runs 7
expect_error "--seconds is given twice \('1' and '2'\)" bench "$model" --seconds 1 --seconds=2
expect_error "--providers is given twice" inspect "$model" --providers cpu --providers cuda
expect_error "--dim batch is given twice" run "$model" --dim batch=4 --dim batch=8
expect_error "--input image is given twice" run "$model" --input "image=$model" --input "image=$model"
expect_ok 'output logits: float\[4,10\]' run "$model" --dim batch=4 --strict --strict

# The edges of the ranges still run.
expect_ok '"batch":2,"runs":[0-9]+' bench "$model" --seconds 0.05 --warmup 0 --batch 2 --seed 4294967295 --json
expect_ok '"runs":1,' bench "$model" --runs 1 --warmup 0 --threads 1 --max-copies -1 --json
expect_ok 'output logits: float\[3,10\]' run "$model" --runs 2 --dim batch=3 --seed 0

echo "$((count - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
