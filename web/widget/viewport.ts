/** The full-screen panel on phones and the on-screen keyboard. */
import type { RefObject } from 'preact';
import { useLayoutEffect } from 'preact/hooks';

/**
 * While `active`, keeps the visual viewport's height and top in the CSS variables
 * `--viewport-height` and `--viewport-top` of `element`. An on-screen keyboard shrinks the visual
 * viewport but, in most mobile browsers, not the layout viewport a fixed element is placed in: a
 * panel sized by these variables ends above the keyboard, so its question field stays in view.
 */
export function useVisualViewport(element: RefObject<HTMLElement | null>, active: boolean): void {
  useLayoutEffect(() => {
    const viewport = window.visualViewport;
    const target = element.current;
    if (!active || !viewport || !target) return undefined;
    const update = () => {
      target.style.setProperty('--viewport-height', `${viewport.height}px`);
      target.style.setProperty('--viewport-top', `${viewport.offsetTop}px`);
    };
    update();
    viewport.addEventListener('resize', update);
    viewport.addEventListener('scroll', update);
    return () => {
      viewport.removeEventListener('resize', update);
      viewport.removeEventListener('scroll', update);
    };
  }, [active]);
}
