import { describe, expect, it } from 'vitest';
import { questionBody, questionFrom } from './request-input.ts';

describe('the question a request_input call asks', () => {
  it('trims the question and its choices, and numbers the choices', () => {
    const q = questionFrom({ question: '  Which region? ', choices: [' eu ', 'us'] });
    expect(q).toEqual({ question: 'Which region?', choices: ['eu', 'us'] });
    expect(questionBody(q)).toBe('Which region?\n\n1. eu\n2. us');
  });

  it('drops blank and repeated choices, and asks openly when fewer than two are left', () => {
    expect(questionFrom({ question: 'Go?', choices: ['yes', '  ', 'no', 'yes '] }).choices).toEqual(
      ['yes', 'no'],
    );
    const open = questionFrom({ question: 'Go?', choices: ['yes', '   '] });
    expect(open.choices).toEqual([]);
    expect(questionBody(open)).toBe('Go?');
  });
});
