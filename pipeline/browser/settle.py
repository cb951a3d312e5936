"""When a rendered page is done: DOM stability, read in the page itself.

``load`` misses what a timer or a ``fetch()`` inserts afterwards, and ``networkidle`` costs
half a second a page and never comes on a page that polls. Instead :data:`HOOKS` (run in
every document before its own scripts) counts the page's ``fetch``/XHR requests in flight
and its pending one-shot timers (short ones, and not those a timer's callback arms again and
again: that is polling), and :data:`SETTLE` waits until the document is parsed, nothing of
that is pending, the DOM has not changed for a quiet period, and the body shows some text —
or until the cap, after which the page is read as it is. What a page does to these hooks
only changes how long it is waited for, within the cap.
"""

from __future__ import annotations

QUIET_MS = 250  # no DOM change for this long: settled
POLL_MS = 50
TIMER_MS = 5000  # longer timers are not about the first content
TIMER_DEPTH = 2  # a timer armed by a timer armed by a timer: polling, not loading

HOOKS = f"""
(() => {{
  if (window.__pipelineSettle) return;
  const state = {{pending: 0, timers: new Set(), setTimeout: window.setTimeout.bind(window)}};
  Object.defineProperty(window, '__pipelineSettle', {{value: state, enumerable: false}});
  const done = () => {{ state.pending = Math.max(0, state.pending - 1); }};
  const fetch = window.fetch;
  if (fetch) {{
    window.fetch = function (...args) {{
      state.pending++;
      let answer;
      try {{ answer = fetch.apply(this, args); }} catch (e) {{ done(); throw e; }}
      answer.then(done, done);
      return answer;
    }};
  }}
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {{
    state.pending++;
    this.addEventListener('loadend', done, {{once: true}});
    try {{ return send.apply(this, args); }} catch (e) {{ done(); throw e; }}
  }};
  const setTimer = window.setTimeout, clearTimer = window.clearTimeout;
  let depth = 0;
  window.setTimeout = function (callback, delay, ...args) {{
    const wait = Number(delay) || 0, level = depth;
    if (typeof callback !== 'function' || wait > {TIMER_MS} || level >= {TIMER_DEPTH}) {{
      return setTimer.call(this, callback, delay, ...args);
    }}
    const id = setTimer.call(this, function () {{
      state.timers.delete(id);
      depth = level + 1;
      try {{ return callback.apply(this, args); }} finally {{ depth = 0; }}
    }}, wait);
    state.timers.add(id);
    return id;
  }};
  window.clearTimeout = function (id) {{
    state.timers.delete(id);
    return clearTimer.call(this, id);
  }};
}})();
"""

SETTLE = f"""
async (cap) => {{
  const state = window.__pipelineSettle || {{pending: 0, timers: new Set(),
                                             setTimeout: window.setTimeout.bind(window)}};
  const start = performance.now();
  let last = start;
  const observer = new MutationObserver(() => {{ last = performance.now(); }});
  observer.observe(document, {{childList: true, subtree: true, characterData: true}});
  try {{
    while (performance.now() - start < cap) {{
      await new Promise((resolve) => state.setTimeout(resolve, {POLL_MS}));
      if (document.readyState === 'loading' || state.pending > 0 || state.timers.size > 0
          || performance.now() - last < {QUIET_MS}) continue;
      if (document.body && document.body.innerText.trim()) return true;
    }}
    return false;
  }} finally {{
    observer.disconnect();
  }}
}}
"""
