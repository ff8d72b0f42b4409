#!/usr/bin/env bash
# Re-makes the parser fixtures (tests/fixtures/parsers/*.txt): each is the real output of a real
# test runner on a tiny suite written here, with passing, failing and skipped tests, run with the
# command and flags the SWE-bench Multilingual / Multimodal rows' eval scripts use. The suites are
# ours; no project's code is fetched. Not run by the test suite.
#
#   scripts/parser_fixtures.sh [SECTION ...]     # sections: js ruby php go rust c java (default: all)
#
# Needs: node/npm (the npm registry), cargo, cmake/g++, tclsh, and Debian's packages
# (installed when missing, as root): chromium xvfb golang-go php-cli phpunit ruby ruby-test-unit
# ruby-minitest ruby-rspec ruby-shoulda-context cucumber libgtest-dev googletest doctest-dev ant
# ant-optional junit4 jq. Durations and versions in the outputs vary from run to run; the tests
# only read the lines each parser reads.
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/tests/fixtures/parsers"
WORK="${PARSER_FIXTURES_WORK:-$(mktemp -d -t parser-fixtures-XXXX)}"
mkdir -p "$OUT" "$WORK"
echo "working in $WORK, writing to $OUT"

# `cmd | cat` as in the eval scripts: no terminal, so no colours and no progress redraws.
# The scratch folder's path is replaced by /src so the fixtures name no path of the machine.
save() {
  local name="$1"; shift
  ( "$@" 2>&1 ) | cat | sed "s#$WORK#/src#g" > "$OUT/$name"
  echo "  $name: $(wc -l < "$OUT/$name") lines"
}

apt_need() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
}

section_js() {
  apt_need chromium xvfb xauth jq
  local js="$WORK/js"
  mkdir -p "$js" && cd "$js" || return 1
  [ -f package.json ] || npm init -y >/dev/null
  npm install --no-audit --no-fund -s jest@30 vitest@4 mocha@12 jasmine@5 qunit@2 karma@6 \
    karma-chrome-launcher karma-mocha karma-mocha-reporter karma-jasmine >/dev/null 2>&1
  mkdir -p old && (cd old && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund -s jest@23 vitest@2 >/dev/null 2>&1)

  # jest --verbose (babel, docusaurus, immutable-js): ✓ ✕ ○ lines, nested describes.
  mkdir -p jest/__tests__
  cat > jest/__tests__/range.test.js <<'EOF'
describe('Range', () => {
  it('fixed range', () => { expect(1 + 1).toBe(2); });
  it('sliced sequence works even on filtered sequence', () => { expect([1, 2].length).toBe(3); });
  it.skip('open range', () => {});
  describe('nested', () => {
    test('stepped range', () => { expect(true).toBe(true); });
    test.todo('backwards range');
  });
});
EOF
  cat > jest/__tests__/links.test.js <<'EOF'
test('accepts valid link', () => {});
test('accepts valid non-strict link with anchor', () => { throw new Error('broken anchor'); });
EOF
  echo '{"name":"jestproj","private":true}' > jest/package.json
  (cd jest && save jest_verbose.txt ../node_modules/.bin/jest __tests__ --verbose)
  # jest without --verbose over many files (react-pdf): one PASS/FAIL line per file.
  (cd jest && save jest_files.txt ../node_modules/.bin/jest --no-color __tests__)
  # jest --json, each result turned into one `[STATUS] full name` line by jq (immutable-js 2005).
  (cd jest && save jest_json.txt bash -c "../node_modules/.bin/jest --json __tests__ 2>/dev/null |
     jq -r '.testResults[].assertionResults[] | \"[\(.status | ascii_upcase)] \(.fullName)\"'")

  # wp-calypso: `npm run test-client`, whose script runs an old jest (23) verbosely.
  mkdir -p calypso/client/state/test
  cat > calypso/package.json <<'EOF'
{"name":"calypso-like","private":true,
 "scripts":{"test-client":"NODE_ENV=test ./node_modules/.bin/jest --verbose -c=jest.config.json"}}
EOF
  echo '{"testMatch":["**/test/*.js"]}' > calypso/jest.config.json
  cat > calypso/client/state/test/reducer.js <<'EOF'
describe('reducer', () => {
  it('should store data from the action', () => {});
  it('should use default value for settings with no value', () => { expect(1).toBe(2); });
  describe('#emailSettingsSubmitSettings()', () => {
    it('should dispatch an success action', () => {});
  });
});
describe('actions', () => {
  describe('#fetchEmailSettings()', () => {
    it('should dispatch an request action', () => {});
  });
});
EOF
  # npm echoes the script line; the reference splits the log at ` ./node_modules/.bin/jest `.
  ln -sfn ../old/node_modules calypso/node_modules
  (cd calypso && save calypso_jest.txt npm run test-client)

  # vitest --reporter=verbose (vuejs/core): vitest 2, as vue used, prints no colours into a pipe;
  # vitest 4 does unless told not to, and also lists skipped tests and durations.
  mkdir -p vitest/packages/runtime-core/__tests__
  cat > vitest/packages/runtime-core/__tests__/apiWatch.spec.ts <<'EOF'
import { describe, it, expect } from 'vitest'
describe('api: watch', () => {
  it('effect', () => { expect(1).toBe(1) })
  it('should be executed correctly', () => { expect(1).toBe(2) })
  it.skip('watching single source: ref', () => {})
  describe('deep', () => {
    it('watching single source: getter', () => {})
  })
})
EOF
  echo '{"name":"vitestproj","private":true,"type":"module"}' > vitest/package.json
  (cd vitest && save vitest_verbose.txt ../old/node_modules/.bin/vitest run packages/runtime-core/__tests__/apiWatch.spec.ts --no-watch --reporter=verbose)
  (cd vitest && NO_COLOR=1 save vitest4_verbose.txt ../node_modules/.bin/vitest run packages/runtime-core/__tests__/apiWatch.spec.ts --no-watch --reporter=verbose)

  # mocha -R tap (axios).
  mkdir -p mocha
  cat > mocha/http.js <<'EOF'
const assert = require('assert');
describe('supports http with nodejs', function () {
  it('should respect the timeout property', function () {});
  it('should respect the timeoutErrorMessage property', function () { assert.strictEqual(1, 2); });
  it.skip('should parse the timeout property', function () {});
  describe('compression', function () {
    it('should support gunzip error handling', function () {});
  });
});
EOF
  (cd mocha && save mocha_tap.txt ../node_modules/.bin/mocha -R tap http.js)
  # mocha's spec reporter: p5.js's grunt task runs mocha and prints this epilogue of failures.
  cat > mocha/p5.js <<'EOF'
const assert = require('assert');
describe('docs preprocessor', function () {
  describe('mergeOverloadedMethods()', function () {
    it('should not merge properties', function () { assert.strictEqual(1, 2); });
    it('should merge methods', function () {});
  });
});
describe('helpers/modeAdjust', function () {
  it('should set mode to corners', function () { throw new Error('x: wrong'); });
  it.skip('should set mode to radius', function () {});
});
// p5's suite is long: its list of results stands far (over 1000 characters) from the failures.
describe('src/math/trigonometry.js', function () {
  for (let i = 1; i <= 30; i++) it(`radians documentation example #${i} works`, function () {});
});
EOF
  (cd mocha && save mocha_spec.txt ../node_modules/.bin/mocha p5.js)

  # qunit's own CLI prints TAP (three.js).
  mkdir -p qunit
  cat > qunit/Line.tests.js <<'EOF'
QUnit.module('Objects', () => {
  QUnit.module('Line', () => {
    QUnit.test('Extending', (assert) => { assert.ok(true); });
    QUnit.test('copy/material', (assert) => { assert.strictEqual(1, 2); });
    QUnit.skip('isLine', (assert) => { assert.ok(true); });
  });
});
EOF
  (cd qunit && save qunit_tap.txt ../node_modules/.bin/qunit Line.tests.js)

  # jasmine --no-color (marked): failures are numbered, passes are only counted.
  mkdir -p jasmine/spec
  cat > jasmine/jasmine.json <<'EOF'
{"spec_dir": "spec", "spec_files": ["**/*-spec.js"]}
EOF
  cat > jasmine/spec/new-spec.js <<'EOF'
describe('New', () => {
  it('list_loose_tasks should pass', () => { expect('<ul>').toBe('<ol>'); });
  it('del_strikethrough should pass', () => { expect(1).toBe(1); });
  xit('fences_following_list should pass', () => {});
});
describe('Marked Table cells', () => {
  it('should pass example 9', () => { expect(2).toBe(3); });
});
EOF
  (cd jasmine && save jasmine.txt ../node_modules/.bin/jasmine --no-color --config=jasmine.json)
  cat > jasmine/pass.json <<'EOF'
{"spec_dir": "spec", "spec_files": ["**/*-spec.js"], "env": {"failSpecWithNoExpectations": false}}
EOF
  mkdir -p jasmine-pass/spec && cp jasmine/pass.json jasmine-pass/jasmine.json
  echo "describe('New', () => { it('ok should pass', () => { expect(1).toBe(1); }); });" > jasmine-pass/spec/a-spec.js
  (cd jasmine-pass && save jasmine_clean.txt ../node_modules/.bin/jasmine --no-color --config=jasmine.json)

  # karma with mocha and karma-mocha-reporter in headless Chromium (preact).
  mkdir -p karma-mocha
  cat > karma-mocha/memo.test.js <<'EOF'
describe('memo()', function () {
  it('should have isReactComponent flag', function () {});
  it('should not unnecessarily reorder children #2895', function () { throw new Error('reordered'); });
  describe('refs', function () {
    it('should support adding refs', function () {});
  });
  it.skip('should support custom comparer functions', function () {});
});
describe('render()', function () {
  it('should clear falsy attributes', function () {});
});
EOF
  cat > karma-mocha/karma.conf.js <<'EOF'
module.exports = function (config) {
  config.set({
    basePath: __dirname,
    frameworks: ['mocha'],
    files: ['memo.test.js'],
    reporters: ['mocha'],
    browsers: ['ChromeNoSandbox'],
    customLaunchers: {ChromeNoSandbox: {base: 'ChromeHeadless', flags: ['--no-sandbox']}},
    plugins: ['karma-mocha', 'karma-mocha-reporter', 'karma-chrome-launcher'],
    singleRun: true,
  });
};
EOF
  (cd karma-mocha && CHROME_BIN=/usr/bin/chromium save karma_mocha.txt ../node_modules/.bin/karma start karma.conf.js --single-run)

  # karma with jasmine and the progress reporter in a windowed Chromium under xvfb (Chart.js).
  mkdir -p karma-jasmine
  cat > karma-jasmine/legend.tests.js <<'EOF'
describe('Legend block tests', function () {
  it('should have the correct default config', function () {});
  describe('callbacks', function () {
    it('should call onLeave when the mouse leaves the canvas', function () { expect(1).toBe(2); });
  });
  xit('should draw correctly', function () {});
});
describe('Chart.controllers.bar', function () {
  it('auto /base/test/fixtures/controller.bar/baseLine/bottom.js', function () { expect('a').toBe('b'); });
});
EOF
  cat > karma-jasmine/karma.conf.js <<'EOF'
module.exports = function (config) {
  config.set({
    basePath: __dirname,
    frameworks: ['jasmine'],
    files: ['legend.tests.js'],
    reporters: ['progress'],
    browsers: ['ChromeNoSandbox'],
    customLaunchers: {ChromeNoSandbox: {base: 'Chrome', flags: ['--no-sandbox']}},
    plugins: ['karma-jasmine', 'karma-chrome-launcher'],
    singleRun: true,
  });
};
EOF
  (cd karma-jasmine && CHROME_BIN=/usr/bin/chromium save karma_jasmine.txt xvfb-run -a ../node_modules/.bin/karma start karma.conf.js --single-run --auto-watch false)
}

section_ruby() {
  apt_need ruby ruby-minitest ruby-test-unit ruby-shoulda-context ruby-rspec jq
  local rb="$WORK/ruby"
  mkdir -p "$rb/test" "$rb/spec" && cd "$rb" || return 1
  # minitest -v with shoulda-context (jekyll): `Class#test_: context should title. = 0.00 s = .`
  cat > test/test_filters.rb <<'EOF'
require "minitest/autorun"
require "shoulda-context"

class TestFilters < Minitest::Test
  context "filters" do
    context "where_exp filter" do
      should "filter objects appropriately" do
        assert_equal 1, 1
      end
      should "filter objects across multiple conditions" do
        assert_equal 1, 2
      end
      should "filter with other operators" do
        skip "not yet"
      end
      should "raise on a bad expression" do
        raise ArgumentError, "bad"
      end
    end
  end
end
EOF
  save minitest.txt ruby -I test test/test_filters.rb -v -n "/where_exp filter/" --seed 1
  # test-unit -v (fluentd, faker): `  test_name:   .: (0.000215)`.
  cat > test/test_in_tail.rb <<'EOF'
require "test-unit"

class TailInputTest < Test::Unit::TestCase
  def test_ENOENT_error_after_setup_watcher
    assert_equal 1, 1
  end

  def test_email_with_abbreviations
    assert_equal "a", "b"
  end

  def test_raises
    raise "boom"
  end

  def test_omitted
    omit "not on this platform"
  end

  def test_pending
    pend "later"
  end

  data("daily_age" => "daily", "weekly_age" => "weekly")
  def test_logger_with_rotate_age(data)
    assert_equal data, data
  end

  sub_test_case "ack" do
    test "when ack is expired" do
      assert true
    end
  end
end
EOF
  save test_unit.txt ruby test/test_in_tail.rb -v
  # rspec --format json through the rows' jq filters (fpm/fastlane and rubocop).
  cat > spec/device_spec.rb <<'EOF'
RSpec.describe "Device" do
  describe "detection" do
    it "should detect iPhone XS in portrait and landscape" do
      expect(1).to eq(1)
    end
    it "should detect iPhone 13 in portrait and landscape based on priority" do
      expect(1).to eq(2)
    end
    it "should detect iPhone X instead of iPhone XS" do
      pending "not yet"
      raise "no"
    end
    xit "should be skipped" do
    end
  end
  ['#$a', '#@a'].each do |src|
    it "allows #{src.inspect} with freeze" do
      expect(src).to be_a(String)
    end
  end
end
EOF
  save rspec_with_id.txt bash -c "rspec spec/device_spec.rb --no-color --format json | sed -n '/^{/,\$p' |
    jq -r '.examples[] | \"\(.description) - \(.id) - \(.status)\"'"
  save rspec_grouped.txt bash -c "rspec spec/device_spec.rb --no-color --format json | sed -n '/^{/,\$p' |
    jq -r '.examples | group_by(.description) | .[] |
      if any(select(.status == \"failed\")) then (.[0] | \"\(.description) - failed\")
      else (.[0] | \"\(.description) - \(.status)\") end'"
}

section_php() {
  apt_need php-cli phpunit
  local php="$WORK/php"
  mkdir -p "$php/tests" && cd "$php" || return 1
  # phpunit --testdox --colors=never; a namespaced class gets the `Name (Namespace\Class)` header.
  cat > tests/RoundTest.php <<'EOF'
<?php
namespace Tests\Carbon;
use RuntimeException;
use PHPUnit\Framework\TestCase;

final class RoundTest extends TestCase
{
    public function testRoundWithDefaultUnit(): void { $this->assertSame(1, 1); }
    public function testFloorYear(): void { $this->assertSame(2020, 2021); }
    public function testRoundWithStringsException(): void { throw new RuntimeException('boom'); }
    public function testRoundWithInterval(): void { $this->markTestSkipped('no intl'); }
    public function testCeilMonth(): void { $this->markTestIncomplete('later'); }

    /** @dataProvider prefixes */
    public function testFunctionPrefix(string $in): void { $this->assertNotSame('DAYS/NETWORKDAYS 5', $in); }

    public static function prefixes(): array
    {
        return ['Basic Legacy Function' => ['SUM'], 'DAYS/NETWORKDAYS 5' => ['DAYS/NETWORKDAYS 5'], ['plain']];
    }
}
EOF
  save phpunit_testdox.txt phpunit --testdox --colors=never tests/RoundTest.php
}

section_go() {
  apt_need golang-go
  local go="$WORK/go"
  mkdir -p "$go/logging" && cd "$go" || return 1
  printf 'module example.com/filters\n\ngo 1.19\n' > go.mod
  cat > logging/filters_test.go <<'EOF'
package logging

import "testing"

func TestQueryFilter(t *testing.T) {}

func TestCookieFilter(t *testing.T) { t.Fatal("cookie kept") }

func TestSkipped(t *testing.T) { t.Skip("needs a network") }

func TestRegexpFilter(t *testing.T) {
	t.Run("plain", func(t *testing.T) {})
	t.Run("with space (and parens)", func(t *testing.T) { t.Error("no match") })
}
EOF
  GOFLAGS=-mod=mod GOPROXY=off save go_test.txt go test -v ./logging
}

section_rust() {
  local rs="$WORK/rust/cksum"
  mkdir -p "$rs/src" "$rs/tests" && cd "$rs" || return 1
  printf '[package]\nname = "cksum"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
  cat > src/lib.rs <<'EOF'
pub fn add(a: u32, b: u32) -> u32 { a + b }

pub mod rules {
    pub mod eradicate {
        #[cfg(test)]
        mod tests {
            #[test]
            fn comment_contains_todo() { assert_eq!(super::super::super::add(1, 1), 2); }
            #[test]
            fn rule_commentedoutcode_path_new_era001_py_expects() { assert_eq!(1, 2, "snapshot differs"); }
            #[test]
            #[ignore]
            fn slow_snapshot() {}
        }
    }
}
EOF
  cat > tests/test_cksum.rs <<'EOF'
mod test_cksum {
    #[test]
    fn test_non_utf8_filename() { panic!("not utf-8"); }
    #[test]
    fn test_base64_raw_conflicts() {}
}
EOF
  cargo build --offline --tests -q 2>/dev/null
  RUST_BACKTRACE=0 RUSTFLAGS=-Awarnings save cargo_test.txt cargo test --offline --no-fail-fast
}

section_c() {
  apt_need cmake g++ libgtest-dev googletest doctest-dev automake autoconf
  local c="$WORK/c"
  mkdir -p "$c" && cd "$c" || return 1
  cat > CMakeLists.txt <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(fixtures CXX)
find_package(GTest REQUIRED)
enable_testing()
add_executable(printf-test printf_test.cc)
target_link_libraries(printf-test GTest::gtest_main)
add_test(NAME printf-test COMMAND printf-test)
add_executable(test-udt udt_test.cc)
EOF
  cat > printf_test.cc <<'EOF'
#include <gtest/gtest.h>
TEST(PrintfTest, NoArgs) { EXPECT_EQ(1, 1); }
TEST(PrintfTest, MinusFlag) { EXPECT_EQ(1, 2) << "left-aligned"; }
TEST(PrintfTest, Locale) { GTEST_SKIP() << "no locale"; }
TEST(format_test, format_int) { EXPECT_TRUE(true); }
class Width : public ::testing::TestWithParam<int> {};
TEST_P(Width, Pads) { EXPECT_LT(GetParam(), 2); }
INSTANTIATE_TEST_SUITE_P(Sizes, Width, ::testing::Values(1, 3));
EOF
  cat > udt_test.cc <<'EOF'
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
TEST_CASE("basic usage") {
  SUBCASE("conversion to json via free-functions") { CHECK(1 == 2); }
  SUBCASE("conversion from json via free-functions") { CHECK(1 == 1); CHECK(2 == 2); }
}
TEST_CASE("no subcases") { CHECK(true); }
TEST_CASE("skipped case" * doctest::skip()) { CHECK(false); }
EOF
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build -j2 >/dev/null
  # fmt: ctest -V prefixes googletest's lines with the test number.
  save gtest_ctest.txt ctest --test-dir build -V -R printf-test
  # nlohmann/json: doctest with -s -r=xml.
  save doctest_xml.txt ./build/test-udt -s -r=xml
  # jq: `make check` under automake's parallel test harness (PASS:/FAIL:/SKIP:/XFAIL: lines).
  mkdir -p am/tests && cd am || return 1
  printf 'AC_INIT([am],[1])\nAM_INIT_AUTOMAKE([foreign])\nAC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n' > configure.ac
  printf 'TESTS = tests/jqtest tests/shtest tests/utf8test tests/skiptest tests/xfailtest\nXFAIL_TESTS = tests/xfailtest\n' > Makefile.am
  printf '#!/bin/sh\nexit 0\n' > tests/jqtest
  printf '#!/bin/sh\nexit 1\n' > tests/shtest
  printf '#!/bin/sh\nexit 0\n' > tests/utf8test
  printf '#!/bin/sh\nexit 77\n' > tests/skiptest
  printf '#!/bin/sh\nexit 1\n' > tests/xfailtest
  chmod +x tests/*
  autoreconf -i >/dev/null 2>&1 && ./configure >/dev/null && save automake_check.txt make check
}

section_java() {
  # Maven runs offline from a local repository that already holds surefire and JUnit 5; without
  # one it cannot run here (the maven central repository is out of reach).
  local mvn="$WORK/maven"
  mkdir -p "$mvn/src/test/java/com/google/gson" && cd "$mvn" || return 1
  cat > pom.xml <<'EOF'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.google.gson</groupId>
  <artifactId>fixture</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.source>17</maven.compiler.source>
    <maven.compiler.target>17</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter-api</artifactId><version>5.10.2</version><scope>test</scope></dependency>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter-engine</artifactId><version>5.10.2</version><scope>test</scope></dependency>
  </dependencies>
  <build><plugins>
    <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
    <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.11.0</version></plugin>
    <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
  </plugins></build>
</project>
EOF
  cat > src/test/java/com/google/gson/JsonTreeReaderTest.java <<'EOF'
package com.google.gson;
import static org.junit.jupiter.api.Assertions.assertEquals;
import org.junit.jupiter.api.Test;
public class JsonTreeReaderTest {
  @Test public void testSkipValue_emptyJsonObject() { assertEquals(1, 1); }
  @Test public void testSkipValue_filledJsonObject() { assertEquals(1, 2); }
  @Test public void testSkipValue_neverRun() { assertEquals(1, 1); }
}
EOF
  # As the rows run it: one `mvn test -Dtest=...` per test, chained with &&, under set -x.
  local t=com.google.gson.JsonTreeReaderTest
  save maven_per_test.txt bash -xc "mvn -o test -B -Dtest=$t#testSkipValue_emptyJsonObject &&
    mvn -o test -B -Dtest=$t#testSkipValue_filledJsonObject && mvn -o test -B -Dtest=$t#testSkipValue_neverRun"
}

sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(js ruby php go rust c java)
for s in "${sections[@]}"; do echo "== $s"; "section_$s"; done
