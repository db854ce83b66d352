#!/usr/bin/env node
// Packs Sightline's two npm packages around one release binary:
//
//   node npm/pack.js --binary target/dist-stage/sightline --version 0.1.0 --glibc 2.35 \
//                    --stage target/dist-stage/npm --out target/dist
//
//   sightline-VERSION.tgz               `sightline`: bin/sightline.js (the launcher), and an
//                                       optionalDependency on the platform package
//   sightline-linux-x64-VERSION.tgz     `@sightline/linux-x64`: bin/sightline, with os/cpu/libc
//                                       fields so npm installs it only where it runs
//
// (esbuild's layout: no postinstall script, no download at install time.) The platform is
// this machine's (the binary is built here); the version is the binary's, set in both
// manifests. Each package is staged under --stage and packed with `npm pack`.
"use strict";

const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");

// process.platform/arch -> the platform package's name part and its npm fields.
const PLATFORMS = {
  "linux x64": { name: "linux-x64", os: "linux", cpu: "x64", libc: "glibc" },
  "linux arm64": { name: "linux-arm64", os: "linux", cpu: "arm64", libc: "glibc" },
};

function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith("--") || argv[i + 1] === undefined) {
      throw new Error(`usage: node npm/pack.js --binary B --version V --glibc 2.NN --stage DIR --out DIR`);
    }
    out[argv[i].slice(2)] = argv[i + 1];
  }
  for (const k of ["binary", "version", "glibc", "stage", "out"]) {
    if (!out[k]) throw new Error(`pack.js: --${k} is required`);
  }
  return out;
}

function writeJson(file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + "\n");
}

function npmPack(dir, out) {
  const json = execFileSync("npm", ["pack", "--json", "--pack-destination", out], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return path.join(out, JSON.parse(json)[0].filename);
}

function main() {
  const a = args();
  const here = __dirname;
  const platform = PLATFORMS[`${process.platform} ${process.arch}`];
  if (!platform) throw new Error(`pack.js: no platform package defined for ${process.platform} ${process.arch}`);
  const platformPkg = `@sightline/${platform.name}`;

  // The launcher must know this platform package.
  const launcher = fs.readFileSync(path.join(here, "sightline/bin/sightline.js"), "utf8");
  if (!launcher.includes(`"${platformPkg}"`)) {
    throw new Error(`pack.js: npm/sightline/bin/sightline.js does not map ${process.platform} ${process.arch} to ${platformPkg}`);
  }

  fs.rmSync(a.stage, { recursive: true, force: true });
  fs.mkdirSync(a.out, { recursive: true });
  for (const old of fs.readdirSync(a.out)) {
    if (/^sightline-.*\.tgz$/.test(old)) fs.rmSync(path.join(a.out, old));
  }
  const out = path.resolve(a.out);

  // The platform package: the binary and a manifest npm matches against the machine.
  const pdir = path.join(a.stage, platform.name);
  fs.mkdirSync(path.join(pdir, "bin"), { recursive: true });
  fs.copyFileSync(a.binary, path.join(pdir, "bin/sightline"));
  fs.chmodSync(path.join(pdir, "bin/sightline"), 0o755);
  const readme = fs.readFileSync(path.join(here, "platform/README.md"), "utf8");
  fs.writeFileSync(
    path.join(pdir, "README.md"),
    readme.replaceAll("PLATFORM", platform.name).replaceAll("GLIBC", a.glibc)
  );
  const main = JSON.parse(fs.readFileSync(path.join(here, "sightline/package.json"), "utf8"));
  writeJson(path.join(pdir, "package.json"), {
    name: platformPkg,
    version: a.version,
    description: `The sightline binary for ${platform.name} (glibc ${a.glibc} or newer)`,
    license: main.license,
    os: [platform.os],
    cpu: [platform.cpu],
    libc: [platform.libc],
    files: ["bin/sightline", "README.md"],
    preferUnplugged: true,
    sightline: { glibc: a.glibc },
  });

  // The main package: the launcher, depending on the platform package(s) built.
  const mdir = path.join(a.stage, "sightline");
  fs.mkdirSync(path.join(mdir, "bin"), { recursive: true });
  fs.copyFileSync(path.join(here, "sightline/bin/sightline.js"), path.join(mdir, "bin/sightline.js"));
  fs.chmodSync(path.join(mdir, "bin/sightline.js"), 0o755);
  fs.copyFileSync(path.join(here, "sightline/README.md"), path.join(mdir, "README.md"));
  main.version = a.version;
  main.optionalDependencies = { [platformPkg]: a.version };
  writeJson(path.join(mdir, "package.json"), main);

  for (const dir of [pdir, mdir]) {
    console.log(`pack.js: ${npmPack(dir, out)}`);
  }
}

try {
  main();
} catch (e) {
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
}
