// mpquery serve's script (built into the binary: build/serve_js.h). The
// pages work without it but for the flame graph's zoom: a click on a frame
// puts its path (root-first names, ';' between) in the URL's zoom.
(function () {
  'use strict';
  var frames = document.querySelectorAll('svg.flame g.f');
  function pathOf(i) {
    var names = [];
    for (var g = frames[i]; g && g.dataset.p !== '-1'; g = frames[+g.dataset.p]) names.unshift(g.dataset.name);
    return names.join(';');
  }
  frames.forEach(function (g) {
    g.addEventListener('click', function () {
      var u = new URL(window.location.href), p = pathOf(+g.dataset.i);
      if (p) u.searchParams.set('zoom', p); else u.searchParams.delete('zoom');
      window.location.href = u.toString();
    });
  });
  // the forms: empty fields left out of the URL
  document.querySelectorAll('form').forEach(function (f) {
    f.addEventListener('submit', function (e) {
      var u = new URL(f.getAttribute('action'), window.location.href);
      new FormData(f).forEach(function (v, k) { if (v !== '') u.searchParams.append(k, v); });
      e.preventDefault();
      window.location.href = u.toString();
    });
  });
})();
