import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.ts';
import { launchBrowser, screenshot, signedInOperator } from '../support/browser.ts';
import { freshPglite } from '../support/db.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { fakeModelAgent } from '../support/turn.ts';

const say = (content: string) => ({ kind: 'completion' as const, content });

/*
 * Issue 33's awaiting_input test, in a real browser: two operators share a conversation with an
 * agent. Grace's message makes the agent ask the conversation a question; the run parks and her
 * page shows the question with its answer form. Bob, not Grace, answers in his own browser; the
 * run resumes and replies. Both messages are attributed: the question to the agent, the answer to
 * Bob. A third operator who never spoke in the conversation is refused, in the UI's words.
 */
describe('a run parked on a question, answered in the UI by another participant', () => {
  let db: Db;
  let server: TestServer;
  let model: FakeChatCompletions;
  let browser: Browser;
  let grace: Page;
  let bob: Page;
  let mallory: Page;
  let bobActor: string;

  beforeAll(async () => {
    db = await freshPglite();
    server = await startTestServer(db);
    model = await startFakeChatCompletions();
    await fakeModelAgent(server.mesh, model.baseUrl, 'helper');
    browser = await launchBrowser();
    const signedIn = (label: string) => signedInOperator(browser, db, server.url, label);
    grace = (await signedIn('grace')).page;
    const b = await signedIn('bob');
    bob = b.page;
    bobActor = b.actor;
    mallory = (await signedIn('mallory')).page;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await model?.close();
    await db?.close();
  }, 60_000);

  /** Sends a message from `page`'s chat form and waits for the page the post lands on. */
  async function send(page: Page, body: string): Promise<void> {
    await page.fill('form.send textarea[name=body]', body);
    await Promise.all([page.waitForURL(/conversation=/), page.click('form.send button')]);
  }

  it('parks on Grace’s message, shows the question, and resumes on Bob’s answer', async () => {
    // Grace opens a shared conversation; Bob joins it: both are its participants.
    model.enqueue(say('Hello, Grace.'));
    await grace.goto(`${server.url}agents/helper/chat`);
    await grace.selectOption('form.send select[name=audience]', 'shared');
    await send(grace, 'The login test is flaky again.');
    await grace.locator('li.message.outbound', { hasText: 'Hello, Grace.' }).waitFor();
    const conversation = grace.url();

    model.enqueue(say('Hello, Bob.'));
    await bob.goto(conversation);
    await send(bob, 'I am looking at it too.');
    await bob.locator('li.message.outbound', { hasText: 'Hello, Bob.' }).waitFor();

    // Grace's next message makes the agent ask; her page reloads onto the question's form.
    model.enqueue({
      kind: 'completion',
      content: null,
      toolCalls: [
        {
          id: 'ask-1',
          name: 'request_input',
          arguments: JSON.stringify({
            question: 'Which fix should I apply?',
            choices: ['retry the request', 'raise the timeout'],
          }),
        },
      ],
    });
    await grace.goto(conversation);
    await send(grace, 'We have two fixes; pick one and apply it.');
    const asked = grace.locator('li.message.outbound', { hasText: 'Which fix should I apply?' });
    await asked.locator('form.question.open').waitFor();
    await expect(asked.locator('.meta').textContent()).resolves.toContain('helper');
    await expect(asked.locator('button.choice').allTextContents()).resolves.toEqual([
      'retry the request',
      'raise the timeout',
    ]);
    await screenshot(grace, 'question-asked');

    // Mallory never spoke here: her answer is refused as an error, and nothing is recorded.
    await mallory.goto(conversation);
    await Promise.all([
      mallory.waitForURL(/conversation=/),
      mallory.click('form.question.open button.choice >> text=retry the request'),
    ]);
    await expect(mallory.locator('p.flash.error').textContent()).resolves.toContain(
      'only its participants may answer',
    );
    await mallory.locator('form.question.open').waitFor();

    // Bob answers with a choice; the run resumes and replies on his page.
    model.enqueue(say('Applying the timeout fix, as Bob chose.'));
    await bob.goto(conversation);
    await Promise.all([
      bob.waitForURL(/conversation=/),
      bob.click('form.question.open button.choice >> text=raise the timeout'),
    ]);
    await expect(bob.locator('p.flash.ok').textContent()).resolves.toContain('Answered');
    const answer = bob.locator('li.message.inbound', { hasText: 'raise the timeout' });
    await expect(answer.locator('.meta').textContent()).resolves.toContain(bobActor);
    await bob.locator('li.message.outbound', { hasText: 'Applying the timeout fix' }).waitFor();
    await bob.reload();
    const settled = await bob
      .locator('li.message.outbound', { hasText: 'Which fix' })
      .locator('.question.answered')
      .textContent();
    expect((settled ?? '').replace(/\s+/g, ' ')).toContain(`Answered by ${bobActor}`);
    await screenshot(bob, 'question-answered');

    // The model saw Bob's answer, attributed, as the question's observation.
    const last = model.requests.at(-1)?.json as { messages: { role: string; content: string }[] };
    expect(last.messages.find((m) => m.role === 'tool')?.content).toBe(
      `${bobActor} answered: raise the timeout`,
    );
  }, 90_000);
});
