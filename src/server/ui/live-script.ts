/**
 * The pages' one script (served as /assets/live.js, allowed by the pages' `script-src 'self'`):
 * it follows a run's event stream (`/runs/{run}/events`, authorized by the session cookie) and
 * updates the page in place. A run page appends each new step as the server rendered it, moves
 * its budget meters with each progress event, adds and updates its outbound events' rows, shows
 * the text the model is writing (`delta` events) under the steps and updates the status; a chat page lists the turn's steps under the
 * message as they happen (requests to the model, calls, their results), shows the reply as the
 * model writes it, replaces that draft with the recorded reply, updates the run's link and frees Send
 * (disabled while the turn it follows runs) once that run ends, and reloads when the run parked
 * on a question, so the question shows with its answer form. A page without
 * it is the same page, only not updated until reloaded.
 *
 * Step markup comes from the server's own renderer (every value escaped there); anything else
 * the script writes goes in as text.
 */
export const LIVE_SCRIPT = `'use strict';
(function () {
  function follow(url, after, on) {
    var source = new EventSource(url + '?after=' + encodeURIComponent(after || '0'));
    source.addEventListener('state', function (e) {
      var state = JSON.parse(e.data);
      document.querySelectorAll('[data-run-status="' + state.run_id + '"]').forEach(function (el) {
        el.textContent = (el.getAttribute('data-prefix') || '') + state.status;
        if (el.classList.contains('status')) el.className = 'status ' + state.status;
      });
      document.querySelectorAll('[data-run-reason="' + state.run_id + '"]').forEach(function (el) {
        el.textContent = state.reason ? ' ' + state.reason : '';
      });
      if (state.final && state.status === 'failed') {
        // A failed turn is an error on the message it answered, never a quiet success.
        document.querySelectorAll('[data-run-status="' + state.run_id + '"]').forEach(function (el) {
          var item = el.closest('li.message');
          if (!item || item.querySelector('.run-error')) return;
          var error = document.createElement('p');
          error.className = 'run-error';
          error.setAttribute('role', 'alert');
          error.textContent = 'The turn failed: ' + (state.reason || 'no reason recorded');
          item.appendChild(error);
        });
      }
      if (state.final) {
        // A draft never outlives its run: a reply replaced it, or there is none to show.
        document.querySelectorAll('[data-draft="' + state.run_id + '"]').forEach(function (el) {
          el.remove();
        });
        // A chat page's Send waits for the turn it follows: free it, and drop the note.
        document.querySelectorAll('[data-busy-while="' + state.run_id + '"]').forEach(function (el) {
          el.disabled = false;
        });
        document.querySelectorAll('[data-busy-note="' + state.run_id + '"]').forEach(function (el) {
          el.remove();
        });
        source.close();
        document.documentElement.setAttribute('data-live', 'ended');
        // A run that parked on a question: the page shows it with its answer form once reloaded.
        if (state.status === 'awaiting_input' && !document.querySelector('[data-question="' + state.run_id + '"]'))
          location.reload();
      }
    });
    Object.keys(on).forEach(function (name) {
      source.addEventListener(name, function (e) { on[name](JSON.parse(e.data)); });
    });
    document.documentElement.setAttribute('data-live', 'following');
  }

  /** Milliseconds as the run page writes a duration. */
  function duration(ms) {
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    return Math.floor(ms / 60000) + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
  }

  /** A run page's budget meters, from the usage a progress event carries. */
  function meters(usage) {
    var spent = {
      rounds: usage.rounds,
      'tool calls': usage.toolCalls,
      tokens: (usage.inputTokens || 0) + (usage.outputTokens || 0),
      compute: usage.computeMs,
    };
    Object.keys(usage.providerCalls || {}).forEach(function (name) {
      spent[name + ' calls'] = usage.providerCalls[name];
    });
    Object.keys(spent).forEach(function (name) {
      var row = document.querySelector('li.meter-row[data-meter="' + name + '"]');
      var value = spent[name];
      if (!row || typeof value !== 'number') return;
      var meter = row.querySelector('meter');
      var text = row.querySelector('.meter-text');
      if (meter) meter.value = Math.min(value, Number(meter.max));
      if (text)
        text.textContent =
          (name === 'compute' ? duration(value) : value.toLocaleString('en')) +
          ' of ' + row.getAttribute('data-limit-text');
    });
  }

  document.querySelectorAll('ol[data-events]').forEach(function (list) {
    follow(list.getAttribute('data-events'), list.getAttribute('data-after'), {
      step: function (step) {
        if (step.kind === 'model_response')
          document.querySelectorAll('[data-draft="' + step.runId + '"]').forEach(function (el) {
            el.remove();
          });
        if (list.querySelector('[data-seq="' + step.seq + '"]')) return;
        list.insertAdjacentHTML('beforeend', step.html);
      },
      delta: function (delta) {
        // What the model is writing in this round, under the steps until its response lands.
        var box = document.querySelector('.draft-reply[data-draft="' + delta.run_id + '"]');
        if (!box) {
          box = document.createElement('div');
          box.className = 'draft-reply';
          box.setAttribute('data-draft', delta.run_id);
          box.setAttribute('aria-live', 'polite');
          var label = document.createElement('div');
          label.className = 'meta';
          label.textContent = 'The model is writing (round ' + delta.round + ')…';
          var text = document.createElement('div');
          text.className = 'body';
          box.appendChild(label);
          box.appendChild(text);
          list.insertAdjacentElement('afterend', box);
        }
        var body = box.querySelector('.body');
        body.textContent = delta.reset ? delta.text : body.textContent + delta.text;
      },
      progress: function (progress) {
        meters(progress.usage || {});
      },
      effect: function (effect) {
        // An outbound event new or changed (delivered, retried, failed): its row, as rendered.
        var row = document.querySelector('tr[data-effect="' + effect.id + '"]');
        if (row) row.outerHTML = effect.html;
        else {
          var body = document.querySelector('[data-effects] tbody');
          if (body) body.insertAdjacentHTML('beforeend', effect.html);
        }
      },
    });
  });

  /** What a step of a turn is, in a few words for the chat (undefined: not worth a line). */
  function activity(step) {
    if (step.kind === 'model_request')
      return 'Asking the model (round ' + ((step.data && step.data.round) || '?') + ')…';
    if (step.kind === 'tool_call') return 'Calling ' + step.toolName + '…';
    if (step.kind === 'observation') {
      var kind = (step.observation && step.observation.kind) || 'result';
      return step.toolName + ': ' + (kind === 'result' ? 'done' : kind.replace('_', ' '));
    }
    return undefined;
  }

  document.querySelectorAll('ol[data-reply-events]').forEach(function (list) {
    follow(list.getAttribute('data-reply-events'), '0', {
      step: function (step) {
        var draft = list.querySelector('li.draft[data-draft="' + step.runId + '"]');
        if (draft && step.kind === 'model_response' && step.data && (step.data.toolCalls || []).length > 0)
          draft.remove();
        var text = activity(step);
        var link = list.querySelector('[data-run-status="' + step.runId + '"]');
        var item = link && link.closest('li.message');
        if (!text || !item) return;
        var steps = item.querySelector('ol.activity');
        if (!steps) {
          steps = document.createElement('ol');
          steps.className = 'activity';
          item.appendChild(steps);
        }
        if (steps.querySelector('[data-seq="' + step.seq + '"]')) return;
        var line = document.createElement('li');
        line.setAttribute('data-seq', String(step.seq));
        line.setAttribute('data-kind', step.kind);
        line.textContent = text;
        steps.appendChild(line);
      },
      note: function (note) {
        // A progress note the run posted: the agent's message in the conversation, as it happens.
        if (list.querySelector('[data-message="' + note.message_id + '"]')) return;
        var item = outbound(list, 'message outbound progress');
        item.setAttribute('data-message', note.message_id);
        item.querySelector('.meta').textContent = 'progress · ' + (list.getAttribute('data-agent') || '');
        item.querySelector('.body').textContent = note.body;
      },
      browser: function (session) {
        // The run's browser session, under the message: its state, and where to watch it live.
        var link = list.querySelector('[data-run-status="' + session.run_id + '"]');
        var item = link && link.closest('li.message');
        if (!item) return;
        var line = item.querySelector('[data-browser-session="' + session.id + '"]');
        if (!line) {
          line = document.createElement('p');
          line.className = 'browser-live';
          line.setAttribute('data-browser-session', session.id);
          item.appendChild(line);
        }
        line.textContent = 'Browser session: ' + session.state.replace('_', ' ');
        var mesh = (session.live_view_url || '').indexOf('/browser-sessions/') === 0;
        if (session.live_view_url && !session.released_at && (mesh || /^https?:/i.test(session.live_view_url))) {
          var watch = document.createElement('a');
          watch.href = session.live_view_url;
          if (!mesh) {
            watch.target = '_blank';
            watch.rel = 'noreferrer';
          }
          watch.textContent = 'Watch it live';
          line.appendChild(document.createTextNode(' · '));
          line.appendChild(watch);
        }
      },
      delta: function (delta) {
        // The reply as the model writes it, in a message of its own marked as a draft.
        var item = list.querySelector('li.draft[data-draft="' + delta.run_id + '"]');
        if (!item) {
          item = outbound(list, 'message outbound draft');
          item.setAttribute('data-draft', delta.run_id);
          item.setAttribute('aria-busy', 'true');
        }
        var body = item.querySelector('.body');
        body.textContent = delta.reset ? delta.text : body.textContent + delta.text;
      },
      reply: function (reply) {
        if (list.querySelector('[data-message="' + reply.message_id + '"]')) return;
        // The recorded reply replaces the draft: what the run kept is what the page shows.
        var item = list.querySelector('li.draft[data-draft="' + reply.run_id + '"]');
        if (item) {
          item.className = 'message outbound';
          item.removeAttribute('data-draft');
          item.removeAttribute('aria-busy');
        } else item = outbound(list, 'message outbound');
        item.setAttribute('data-message', reply.message_id);
        item.querySelector('.body').textContent = reply.body;
      },
    });
  });

  /*
   * Mesh's own Live View: the session's screen drawn from its frame stream, and a person's clicks,
   * keys and scrolls posted to it in order (typing is sent in small batches). The server refuses
   * input unless the run has handed its browser over.
   */
  document.querySelectorAll('canvas[data-live-view]').forEach(function (canvas) {
    var KEYS = ['Enter', 'Backspace', 'Tab', 'Escape', 'Delete', 'ArrowLeft', 'ArrowUp', 'ArrowRight', 'ArrowDown'];
    var base = canvas.getAttribute('data-live-view');
    var csrf = canvas.getAttribute('data-csrf');
    var state = document.querySelector('[data-live-state]');
    var draw = canvas.getContext('2d');
    var size = { w: canvas.width, h: canvas.height };
    var queue = Promise.resolve();
    var typed = '';
    var typing;
    function send(fields) {
      fields.csrf = csrf;
      queue = queue.then(function () {
        return fetch(base + '/input', { method: 'POST', body: new URLSearchParams(fields) }).then(
          function (res) {
            if (!res.ok && state)
              res.json().then(
                function (e) { state.textContent = (e.error && e.error.message) || 'Refused.'; },
                function () { state.textContent = 'Refused (' + res.status + ').'; },
              );
          },
          function () {},
        );
      });
    }
    function flushText() {
      clearTimeout(typing);
      if (typed) send({ type: 'text', text: typed });
      typed = '';
    }
    function at(e) {
      var r = canvas.getBoundingClientRect();
      return {
        x: String(Math.round(((e.clientX - r.left) / r.width) * size.w)),
        y: String(Math.round(((e.clientY - r.top) / r.height) * size.h)),
      };
    }
    var source = new EventSource(base + '/screen');
    source.addEventListener('frame', function (e) {
      var f = JSON.parse(e.data);
      size = { w: f.width || size.w, h: f.height || size.h };
      var raw = atob(f.jpeg);
      var bytes = new Uint8Array(raw.length);
      for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
      createImageBitmap(new Blob([bytes], { type: 'image/jpeg' })).then(function (img) {
        if (canvas.width !== img.width) canvas.width = img.width;
        if (canvas.height !== img.height) canvas.height = img.height;
        draw.drawImage(img, 0, 0);
        canvas.setAttribute('data-frames', String(Number(canvas.getAttribute('data-frames') || '0') + 1));
      });
    });
    source.addEventListener('state', function (e) {
      var s = JSON.parse(e.data);
      canvas.setAttribute('data-state', s.state);
      if (state) state.textContent = s.text;
      if (s.state === 'released' || s.state === 'failed') source.close();
    });
    canvas.addEventListener('click', function (e) {
      flushText();
      canvas.focus();
      var p = at(e);
      send({ type: 'click', x: p.x, y: p.y });
    });
    canvas.addEventListener('wheel', function (e) {
      e.preventDefault();
      flushText();
      var p = at(e);
      send({ type: 'scroll', x: p.x, y: p.y, dy: String(Math.round(e.deltaY)) });
    }, { passive: false });
    canvas.addEventListener('keydown', function (e) {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key.length === 1) {
        e.preventDefault();
        typed += e.key;
        clearTimeout(typing);
        typing = setTimeout(flushText, 40);
        return;
      }
      if (KEYS.indexOf(e.key) < 0) return;
      e.preventDefault();
      flushText();
      send({ type: 'key', key: e.key });
    });
    canvas.addEventListener('paste', function (e) {
      var text = e.clipboardData && e.clipboardData.getData('text');
      if (text) {
        e.preventDefault();
        flushText();
        send({ type: 'text', text: text.slice(0, 2000) });
      }
    });
  });

  /** A new message from the agent at the end of a chat's list: its meta line and empty body. */
  function outbound(list, className) {
    var item = document.createElement('li');
    item.className = className;
    var meta = document.createElement('div');
    meta.className = 'meta';
    meta.textContent = list.getAttribute('data-agent') || '';
    var body = document.createElement('div');
    body.className = 'body';
    item.appendChild(meta);
    item.appendChild(body);
    list.appendChild(item);
    return item;
  }
})();
`;
