// Start Pyodide from the site's own copy and put zerolint on its path: the wheels are unpacked into
// site-packages from files of this site (no micropip, no package index, no CDN).

export async function startPython(build) {
  const base = new URL(".", document.baseURI);
  // loadPyodide comes from pyodide/pyodide.js (a classic script before this one)
  const pyodide = await globalThis.loadPyodide({ indexURL: new URL("pyodide/", base).href });
  for (const wheel of build.wheels) {
    const response = await fetch(new URL(`wheels/${wheel}`, base));
    if (!response.ok) throw new Error(`wheels/${wheel}: HTTP ${response.status}`);
    pyodide.unpackArchive(await response.arrayBuffer(), "wheel");
  }
  const module = await fetch(new URL("py/zerolint_playground.py", base));
  if (!module.ok) throw new Error(`py/zerolint_playground.py: HTTP ${module.status}`);
  pyodide.FS.mkdirTree("/playground");
  pyodide.FS.writeFile("/playground/zerolint_playground.py", await module.text());
  pyodide.runPython("import sys; sys.path.insert(0, '/playground')");
  const api = pyodide.pyimport("zerolint_playground");
  // Each call takes and returns plain strings: no Python objects outlive a call.
  return {
    about: () => JSON.parse(api.about()),
    lint: (text, s) => JSON.parse(api.lint(text, s.target, s.version, s.world)),
    fix: (text, s, unsafe) => JSON.parse(api.fix(text, s.target, s.version, s.world, unsafe)),
    estimate: (text, s) => JSON.parse(api.estimate(text, s.params, s.target, s.version, s.world, s.gpumem)),
  };
}
