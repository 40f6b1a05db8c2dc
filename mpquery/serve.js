// mpquery serve's script (built into the binary: build/serve_js.h). The
// pages work without it but for the flame graph's zoom (a click on a frame
// puts its path, root-first names with ';' between, in the URL's zoom) and
// the timeline chart's drag (the time range dragged across becomes the
// URL's since and until, as +S: seconds from the run's start).
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
  // the chart (div.chart svg: timeline's plot, its time axis in data-*):
  // a drag across it marks the range on every panel, then opens the same
  // view with since=+A&until=+B; a click without a drag does nothing
  var chart = document.querySelector('div.chart svg');
  if (chart && chart.dataset.tmax) {
    var left = +chart.dataset.plotLeft, width = +chart.dataset.plotWidth, tmax = +chart.dataset.tmax;
    var offset = +chart.dataset.runOffset || 0, panels = chart.querySelectorAll('g.panel > rect:first-of-type');
    var from = null, marks = [];
    var xOf = function (e) {     // the event's x in the plot's units, within its time axis
      var p = chart.createSVGPoint();
      p.x = e.clientX, p.y = e.clientY;
      var x = p.matrixTransform(chart.getScreenCTM().inverse()).x;
      return Math.min(Math.max(x, left), left + width);
    };
    var show = function (a, b) {
      marks.forEach(function (m) {
        m.setAttribute('x', Math.min(a, b));
        m.setAttribute('width', Math.abs(b - a));
      });
    };
    var plus = function (x, digits) { return '+' + ((x - left) / width * tmax + offset).toFixed(digits); };
    chart.addEventListener('mousedown', function (e) {
      if (e.button !== 0) return;
      e.preventDefault();
      from = xOf(e);
      marks = Array.prototype.map.call(panels, function (p) {
        var m = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
        m.setAttribute('class', 'drag');
        m.setAttribute('y', p.getAttribute('y'));
        m.setAttribute('height', p.getAttribute('height'));
        p.parentNode.appendChild(m);
        return m;
      });
      show(from, from);
    });
    window.addEventListener('mousemove', function (e) { if (from !== null) show(from, xOf(e)); });
    window.addEventListener('mouseup', function (e) {
      if (from === null) return;
      var a = Math.min(from, xOf(e)), b = Math.max(from, xOf(e));
      from = null;
      if (b - a < 3) {        // a click: no range
        marks.forEach(function (m) { m.remove(); });
        return;
      }
      // 3 decimals as info and timeline print times; more for a range under 10 ms
      var digits = (b - a) / width * tmax < 0.01 ? 6 : 3;
      var u = new URL(window.location.href);
      u.searchParams.set('since', plus(a, digits));
      u.searchParams.set('until', plus(b, digits));
      window.location.href = u.toString();
    });
  }
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
