#!/usr/bin/env node
// The `sightline` command of the npm package: runs the binary of the platform
// package npm installed beside this one (an optionalDependency whose `os`, `cpu`
// and `libc` fields match this machine, the way esbuild ships), with the same
// arguments, stdio and exit status. Nothing is downloaded, no install script runs.
// $SIGHTLINE_BIN overrides the binary.
"use strict";

const { spawn } = require("child_process");

// `${process.platform} ${process.arch}` -> the platform package holding bin/sightline.
const PLATFORMS = {
  "linux x64": "@sightline/linux-x64",
  "linux arm64": "@sightline/linux-arm64",
};

function fail(message) {
  process.stderr.write(`sightline (npm): ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  if (process.env.SIGHTLINE_BIN) return process.env.SIGHTLINE_BIN;
  const key = `${process.platform} ${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    fail(`no prebuilt binary for ${key} (there is one for: ${Object.keys(PLATFORMS).join(", ")}); ` +
      "build it with `cargo install --locked --path .` and set SIGHTLINE_BIN");
  }
  const report = process.report && process.report.getReport ? process.report.getReport() : null;
  if (report && report.header && process.platform === "linux" && !report.header.glibcVersionRuntime) {
    fail(`${pkg} is built for glibc; this system's C library is not glibc (musl?)`);
  }
  let manifest;
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch (e) {
    fail(`the platform package ${pkg} is not installed next to sightline ` +
      `(npm leaves an optional dependency out when its os/cpu/libc do not match, ` +
      `or with --omit=optional); install it: npm install ${pkg}`);
  }
  const meta = require(manifest);
  const floor = meta.sightline && meta.sightline.glibc;
  const have = report && report.header && report.header.glibcVersionRuntime;
  if (floor && have && compareVersions(have, floor) < 0) {
    fail(`${pkg} needs glibc ${floor} or newer; this system has ${have}`);
  }
  return require("path").join(require("path").dirname(manifest), "bin", "sightline");
}

function compareVersions(a, b) {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] || 0) - (pb[i] || 0);
    if (d !== 0) return d;
  }
  return 0;
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit" });
child.on("error", (e) => fail(`could not run the binary: ${e.message}`));

// The binary ends its browser on SIGINT/SIGTERM/SIGHUP: pass them on, so a client
// that stops this launcher (an MCP client ending `npx sightline mcp`) stops it too.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}

child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so the caller sees what the binary's caller would.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
